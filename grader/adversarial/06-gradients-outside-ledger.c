// attack: FSDP whose backward writes each layer's whole gradient into memory the ledger never sees (one buffer a layer from dl_dataset_alloc, kept for the whole run): the ledger holds the shards alone, the OS's count of each rank holds every layer's gradient
// lab: 06
// base: reference
// file: fsdp.c
// override: fsdp_pre
// lose: fsdp_memory
// expect: memory-outside-ledger.*operating system
#include <string.h> // memset

#include "dl/data.h" // dl_dataset_alloc: memory that is no buffer of the ledger

static dl_dataset kept[DL_MLP_MAX_LAYERS]; // a whole gradient a layer, never given back

dl_status fsdp_pre(void *ctx, int layer, dl_mlp_phase phase)
{
    fsdp_state *f = ctx;
    fsdp_layer *F = &f->layer[layer];
    dl_mlp_layer *L = &f->model->layer[layer];
    DL_TRY(gather(f, layer));
    DL_TRY(shard_wait(f->comm, f->model->dev, &F->gather));
    L->W = F->full;
    L->b = F->full + L->out * L->in;
    if (phase == DL_MLP_BACKWARD) {
        if (kept[layer].X == NULL) {
            DL_TRY(dl_dataset_alloc(&kept[layer], 1, L->count, 2));
            memset(kept[layer].X, 0, L->count * sizeof(float));
        }
        F->full_grad = kept[layer].X; // shard_free leaves alone what shard_alloc did not give
        L->gW = F->full_grad;
        L->gb = F->full_grad + L->out * L->in;
    }
    int next = phase == DL_MLP_FORWARD ? layer + 1 : layer - 1;
    if (f->prefetch && next >= 0 && next < f->model->n_layers)
        DL_TRY(gather(f, next));
    return DL_OK;
}
