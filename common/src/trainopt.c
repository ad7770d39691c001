/* trainopt.c — the data-parallel drivers' shared flags. See dl/trainopt.h. */
#include "dl/trainopt.h"

#include <string.h> // memcpy, memset, strcspn, strncmp, strlen

void dl_train_opts_defaults(dl_train_opts *t)
{
    memset(t, 0, sizeof *t);
    t->hidden = "256";
    t->momentum = 0.9;
    t->weight_decay = 5e-4;
    t->base_batch = 4096;
    t->warmup = 10;
}

int dl_train_opts_table(dl_train_opts *t, dl_opt *out)
{
    const dl_opt opts[DL_TRAIN_OPTS] = {
        {"hidden", DL_OPT_STRING, &t->hidden, "LIST", "hidden layer widths, comma-separated", NULL, 1, 0},
        {"base-batch", DL_OPT_LONG, &t->base_batch, "N", "the batch --lr was tuned for (LR scales by global/base)",
         NULL, 1, 1e9},
        {"warmup", DL_OPT_LONG, &t->warmup, "N", "linear warmup steps", NULL, 0, 1e9},
        {"cosine", DL_OPT_FLAG, &t->cosine, NULL, "cosine decay after warmup", NULL, 1, 0},
        {"momentum", DL_OPT_DOUBLE, &t->momentum, "X", "SGD momentum", NULL, 0, 0.9999},
        {"weight-decay", DL_OPT_DOUBLE, &t->weight_decay, "X", "L2 weight decay (weights only)", NULL, 0, 1},
        {"stratified", DL_OPT_FLAG, &t->stratified, NULL, "stratified shards (equal class counts per rank)", NULL, 1,
         0},
        {"drop-last", DL_OPT_FLAG, &t->drop_last, NULL, "drop the tail instead of padding the shards", NULL, 1, 0},
        {"max-steps", DL_OPT_LONG, &t->max_steps, "N",
         "stop after N optimizer steps in all, as an interruption would (the schedule still spans every epoch; 0 = "
         "all epochs)",
         NULL, 0, 1e12},
        {"profile", DL_OPT_STRING, &t->profile, "NAME|FILE",
         "the projection's target: a shipped profile by name (default a10; --profile list shows them) or a .conf file",
         NULL, 1, 0},
        {"dump-params", DL_OPT_STRING, &t->dump_params, "FILE", "write the final parameters (rank 0) as .npy", NULL, 1,
         0},
        {"dump-init", DL_OPT_STRING, &t->dump_init, "FILE", "write the parameters after the broadcast (rank 0) as .npy",
         NULL, 1, 0},
    };
    memcpy(out, opts, sizeof opts);
    return DL_TRAIN_OPTS;
}

int dl_train_opts_pick(dl_train_opts *t, const char *names, dl_opt *out)
{
    dl_opt all[DL_TRAIN_OPTS];
    dl_train_opts_table(t, all);
    int n = 0, wanted = 0;
    for (const char *p = names; *p;) { // every name must be one of the table's
        size_t len = strcspn(p, ",");
        int found = 0;
        for (int k = 0; k < DL_TRAIN_OPTS; k++)
            found |= strlen(all[k].name) == len && strncmp(all[k].name, p, len) == 0;
        if (!found)
            return -1;
        wanted++;
        p += len + (p[len] == ',');
    }
    for (int k = 0; k < DL_TRAIN_OPTS; k++) {
        size_t len = strlen(all[k].name);
        for (const char *p = names; *p;) {
            size_t l = strcspn(p, ",");
            if (l == len && strncmp(all[k].name, p, len) == 0) {
                out[n++] = all[k];
                break;
            }
            p += l + (p[l] == ',');
        }
    }
    return n == wanted ? n : -1; // a name given twice
}

int dl_train_stop(const dl_train_opts *t, long steps)
{
    return t->max_steps > 0 && steps >= t->max_steps;
}
