/* trainopt.c — the data-parallel drivers' shared flags. See dl/trainopt.h. */
#include "dl/trainopt.h"

#include <string.h> // memcpy, memset

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
        {"max-steps", DL_OPT_LONG, &t->max_steps, "N", "stop after N optimizer steps (0 = all epochs)", NULL, 0, 1e12},
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

int dl_train_stop(const dl_train_opts *t, long steps)
{
    return t->max_steps > 0 && steps >= t->max_steps;
}
