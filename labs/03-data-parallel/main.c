/* main.c — lab 03's driver: data-parallel training of the kit's MLP, and the
 * classic first attempt beside it.
 *
 *   common/bin/dlrun -n 4 build/labs/lab03                 your DDP on Fashion-MNIST
 *   common/bin/dlrun -n 4 build/labs/lab03 --mode naive    four serial copies (no sharding, no sync)
 *   build/labs/lab03 --help                                 every flag
 *
 * Validation is scored every epoch, test once; the last whole epoch is
 * projected onto the target (--profile) against one GPU, and with several
 * ranks the naive attempt and rank 0 alone at the global batch are run
 * beside DDP. The plumbing is the engine's (dl/engine.h), the epoch and the
 * files train.c's and outputs.c's; here is the story around the student's
 * functions (ddp.h). Not a student file. */
#include "ddp.h" // the student's broadcast
#include "dl/eval.h" // dl_eval_accuracy
#include "dl/replica.h" // dl_replica_mlp_diff
#include "kit.h" // lab03_metrics: metrics.csv
#include "outputs.h" // lab03_run and its pieces

/* Scale (task 2), upload, one model on every rank (task 3), the first dump. */
static dl_status start(dl_engine *E)
{
    lab03_run *R = E->ctx;
    dl_progress_line(&E->pr, 0,
                     "lab03: %s mode, %d rank(s) (%s), %s, %zu train / %zu val / %zu test rows, MLP %s -> %zu, batch "
                     "%ld per rank, device %s",
                     lab03_mode_names[R->mode], E->P, dl_comm_backend(E->comm), E->data.name, R->train->n, R->val.n,
                     R->test.n, E->t.hidden, E->sizes[E->n_sizes - 1], E->a.batch_size, dl_device_describe(&E->dev));
    DL_TRY(lab03_scale_and_upload(R));
    DL_TRY(lab03_trainer_init(R, &R->T, R->naive));
    if (!R->naive)
        DL_TRY(ddp_broadcast_params(E->comm, &R->T.m));
    DL_TRY(dl_replica_mlp_diff(E->comm, &R->T.m, &R->S.r.init_diff));
    DL_TRY(lab03_dump(R, E->t.dump_init));
    E->pr.steps_per_epoch = R->T.steps_per_epoch;
    R->bar = &E->pr;
    return DL_OK;
}

/* Tasks 1 and 4 to 6, every epoch. */
static dl_status epoch(dl_engine *E, int e)
{
    lab03_run *R = E->ctx;
    return lab03_train_epoch(R, &R->T, e, &R->eo);
}

/* The test half scored once, the first steps' losses averaged over the
 * ranks, the projection, the naive attempt and one rank at the global batch. */
static dl_status finish(dl_engine *E)
{
    lab03_run *R = E->ctx;
    lab03_results *S = &R->S;
    lab03_sum_up(R);
    if (R->naive) // rank 0's model, as in every epoch
        DL_TRY(dl_eval_accuracy_on(E->comm, 0, &R->T.m, &R->dtest, R->batch.cap, &S->r.test_accuracy));
    else
        DL_TRY(dl_eval_accuracy(E->comm, &R->T.m, &R->dtest, R->batch.cap, &S->r.test_accuracy));
    DL_TRY(lab03_dump(R, E->t.dump_params));
    S->K = R->T.m.steps < R->compare_steps ? R->T.m.steps : R->compare_steps;
    S->ddp_curve = R->T.step_loss;
    if (S->K > 0 && !R->naive)
        DL_TRY(dl_comm_allreduce(E->comm, S->ddp_curve, (size_t)S->K, DL_F64, DL_RED_AVG));
    dl_progress_line(&E->pr, E->rank == 0,
                     "lab03: %s, %d epoch(s), %.1f s: test accuracy %.4f (%zu held-out rows, scored once), params "
                     "differ across ranks by %.3g",
                     lab03_mode_names[R->mode], S->r.epochs_run, S->r.train_seconds, S->r.test_accuracy, R->test.n,
                     S->r.param_diff);
    DL_TRY(lab03_project(R));
    return lab03_compare(R);
}

static const dl_lab lab03 = {
    .prog = "lab03",
    .dir = "03-data-parallel",
    .about = "Lab 03: data-parallel training of an MLP on Fashion-MNIST. Start it with common/bin/dlrun -n P; "
             "--mode naive runs the classic first attempt.",
    .metrics = lab03_metrics,
    .defaults = lab03_defaults,
    .options = lab03_options,
    .setup = lab03_setup,
    .start = start,
    .epoch = epoch,
    .row = lab03_row,
    .finish = finish,
    .files = lab03_files,
    .plots = lab03_plots,
    .summary = lab03_summary,
    .closing = lab03_closing,
    .teardown = lab03_teardown,
};

static lab03_run R;
DL_LAB_MAIN(lab03, &R)
