/* engine.c — the one training driver: flags, world, device, data, epochs,
 * files and exit statuses, around a lab's hooks. See dl/engine.h. */
#define _POSIX_C_SOURCE 200809L
#include "dl/engine.h"

#include <stdio.h> // fprintf, snprintf
#include <string.h> // memset, memcpy, strcspn

#include "dl/rank.h" // dl_rank_device, dl_rank_exit
#include "dl/timer.h" // dl_now
#include "dl/trace.h" // dl_trace_start, dl_trace_stop

// ---- the flags ----

int dl_engine_parse(dl_engine *E, int argc, char **argv)
{
    const dl_lab *L = E->lab;
    dl_args_defaults(&E->a);
    dl_train_opts_defaults(&E->t);
    snprintf(E->out, sizeof E->out, "build/run/%s", L->dir);
    E->a.out = E->out;
    if (L->epochs > 0)
        E->a.epochs = L->epochs;
    if (L->defaults != NULL)
        L->defaults(E);
    // the lab's own flags first, then the shared training flags it takes
    dl_opt opts[DL_ENGINE_MAX_OPTS + DL_TRAIN_OPTS];
    int n = L->options != NULL ? L->options(E, opts) : 0;
    const char *shared = L->train_opts != NULL ? L->train_opts : L->flags & DL_LAB_HOST ? "" : NULL;
    int k = shared != NULL ? dl_train_opts_pick(&E->t, shared, opts + n) : dl_train_opts_table(&E->t, opts + n);
    if (n < 0 || n > DL_ENGINE_MAX_OPTS || k < 0) {
        fprintf(stderr,
                "%s: error: its flag table names a shared training flag that dl/trainopt.h lacks, or "
                "more flags than DL_ENGINE_MAX_OPTS (a kit bug)\n",
                L->prog);
        return DL_CLI_ERROR;
    }
    int rc = dl_cli_parse(argc, argv, L->prog, L->about, &E->a, opts, (size_t)(n + k));
    if (rc == DL_CLI_RUN && (shared == NULL || strstr(shared, "profile") != NULL))
        rc = dl_profile_cli(L->prog, E->t.profile); // --profile list
    return rc;
}

// ---- set-up ----

/* Rank 0 makes --out and removes an earlier run's summary.json. */
static dl_status prepare_out(const dl_engine *E)
{
    return E->rank == 0 ? dl_summary_prepare(E->a.out) : DL_OK;
}

/* Every step of set-up before the lab's start, in the order the header says. */
static dl_status setup(dl_engine *E)
{
    const dl_lab *L = E->lab;
    E->rank = E->comm != NULL ? dl_comm_rank(E->comm) : 0;
    E->P = E->comm != NULL ? dl_comm_size(E->comm) : 1;
    E->a.quiet |= E->rank != 0; // one voice
    dl_progress_begin(&E->pr, E->a.epochs, 1, E->a.quiet); // the lab sets its steps per epoch when known
    if (E->t.hidden != NULL)
        DL_TRY(dl_mlp_parse_hidden("--hidden", E->t.hidden, E->sizes, &E->n_sizes));
    if (L->check != NULL)
        DL_TRY(L->check(E));
    if (L->flags & DL_LAB_OUT_EARLY) // a run that fails leaves no summary.json that looks like its own
        DL_TRY(prepare_out(E));
    if (!(L->flags & DL_LAB_HOST)) {
        DL_TRY(dl_profile_load(E->t.profile != NULL ? E->t.profile : dl_profile_default(), &E->prof));
        DL_TRY(dl_rank_device(E->comm, &E->a.dev, &E->dev));
        DL_TRY(dl_data_load(E->a.data, &E->data));
    }
    if (E->n_sizes > 0 && E->data.train.d > 0) {
        E->sizes[0] = E->data.train.d;
        E->sizes[E->n_sizes - 1] = (size_t)E->data.train.n_classes;
    }
    if (L->setup != NULL)
        DL_TRY(L->setup(E));
    if (!(L->flags & DL_LAB_OUT_EARLY))
        DL_TRY(prepare_out(E));
    return L->start != NULL ? L->start(E) : DL_OK;
}

// ---- training and the end ----

/* The epochs from E->epoch0, timed. */
static dl_status train(dl_engine *E)
{
    const dl_lab *L = E->lab;
    dl_dev_stats_get(&E->io.resident); // the data is where the model reads it
    if (!(L->flags & DL_LAB_NO_TRACE))
        dl_trace_start(0);
    double t0 = dl_now();
    for (int e = E->epoch0; e < E->a.epochs && !E->stop; e++) {
        DL_TRY(L->epoch(E, e));
        if (L->row != NULL)
            DL_TRY(L->row(E, e));
        E->io.epochs++;
    }
    if (L->flags & DL_LAB_TRACE_STOP)
        dl_trace_stop();
    dl_dev_stats_get(&E->io.end);
    E->train_seconds = dl_now() - t0;
    dl_progress_end(&E->pr);
    return DL_OK;
}

/* summary.json: the lab's body, then what was drawn. */
static void summary(dl_json *j, const void *ctx)
{
    const dl_engine *E = ctx;
    E->lab->summary(j, E);
    dl_json_str(j, "plots", E->plots);
}

/* Rank 0: each plot of names ("a,b") drawn from metrics.csv alone. */
static void metrics_plots(const dl_engine *E, const char *names, dl_plots *p)
{
    while (names != NULL && *names) {
        char base[64];
        size_t len = strcspn(names, ",");
        snprintf(base, sizeof base, "%.*s", (int)len, names);
        dl_plots_draw(p, base, "data='%s/metrics.csv'", E->a.out);
        names += len + (names[len] == ',');
    }
}

/* The files (every rank), then rank 0's plots, summary.json and closing lines. */
static dl_status outputs(dl_engine *E)
{
    const dl_lab *L = E->lab;
    if (L->metrics.n > 0 && E->rank == 0)
        DL_TRY(dl_table_write(&E->metrics, E->a.out, "metrics.csv"));
    if (L->files != NULL)
        DL_TRY(L->files(E));
    if (E->rank != 0)
        return DL_OK;
    char scripts[300];
    snprintf(scripts, sizeof scripts, "labs/%s/plots", L->dir);
    dl_plots p = {scripts, E->a.plot, E->a.out, L->prog, ""};
    metrics_plots(E, L->metrics_plots, &p);
    if (L->plots != NULL)
        L->plots(E, &p);
    memcpy(E->plots, p.list, sizeof E->plots);
    if (L->summary != NULL)
        DL_TRY(dl_summary_write(E->a.out, E->a.json, summary, E));
    if (L->closing != NULL)
        L->closing(E);
    return DL_OK;
}

/* What the engine made, after the lab freed its own. */
static void engine_free(dl_engine *E)
{
    dl_data_free(&E->data);
    dl_comm_finalize(E->comm); // before the device closes: it tears down the GPU's trace and transport
    dl_device_close(&E->dev);
}

int dl_engine_main(const dl_lab *L, void *lab, int argc, char **argv)
{
    dl_engine E;
    memset(&E, 0, sizeof E);
    E.lab = L;
    E.ctx = lab;
    dl_table_init(&E.metrics, L->metrics);
    dl_dev_stats_get(&E.io.start);
    dl_status st = L->flags & DL_LAB_ONE_PROCESS ? DL_OK : dl_comm_init(&argc, &argv, &E.comm);
    if (st != DL_OK)
        return dl_rank_exit(NULL, st, L->prog);
    int rc = dl_engine_parse(&E, argc, argv);
    if (rc == DL_CLI_RUN && L->flags & DL_LAB_ONE_PROCESS)
        rc = dl_cli_single_process(argv[0]);
    if (rc != DL_CLI_RUN) {
        dl_comm_finalize(E.comm);
        return rc == DL_CLI_HELP ? 0 : 2;
    }
    st = setup(&E);
    if (st == DL_OK)
        st = train(&E);
    if (st == DL_OK && L->finish != NULL)
        st = L->finish(&E);
    if (st == DL_OK)
        st = outputs(&E);
    if (L->teardown != NULL)
        L->teardown(&E);
    dl_table_free(&E.metrics);
    if (st == DL_OK) {
        engine_free(&E);
        return 0;
    }
    dl_data_free(&E.data);
    rc = dl_rank_exit(E.comm, st, L->prog); // the world ends here (the others aborted)
    dl_device_close(&E.dev);
    return rc;
}
