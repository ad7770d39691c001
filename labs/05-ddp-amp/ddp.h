/* ddp.h — lab 05: DistributedDataParallel as PyTorch builds it.
 *
 * This header is the contract between your code (buckets.c, reducer.c), the
 * driver (main.c, which owns the data, the epochs and the outputs, and also
 * runs the two classic alternatives as --mode ddp-flat and --mode per-param)
 * and the grader. Do not change it; the handout (README.md) explains each
 * task.
 *
 * Conventions
 * - The model is the kit's MLP (dl/mlp.h). Its parameters, in the order they
 *   were registered, are W_0, b_0, W_1, b_1, ...: parameter p is the weight
 *   (p even) or the bias (p odd) of layer p / 2, and they lie one after the
 *   other in the flat buffers params and grads (so parameter p starts where
 *   p − 1 ends).
 * - Backward produces the gradients last layer first, and calls
 *   ddp_grad_ready for layer l as soon as both of its gradients are final.
 * - Every function returns DL_OK or a failure status with dl_last_error() set;
 *   a skeleton returns DL_ERR_TODO.
 */
#ifndef LAB05_DDP_H
#define LAB05_DDP_H

#include <stddef.h> // size_t
#include <stdint.h> // int32_t

#include "dl/comm.h" // dl_comm, dl_comm_req
#include "dl/mlp.h" // dl_mlp
#include "dl/status.h" // dl_status, DL_TODO

#ifdef __cplusplus
extern "C" {
#endif

#define DDP_MAX_PARAMS (2 * DL_MLP_MAX_LAYERS)
#define DDP_MAX_BUCKETS DDP_MAX_PARAMS

// ---- task 1: buckets (buckets.c) ----

/* A bucket: the parameters first..last (registration indices, first <=
 * last), i.e. the elements offset .. offset + count − 1 of the flat gradient
 * buffer. */
typedef struct ddp_bucket {
    int first, last;
    size_t offset, count;
} ddp_bucket;

/* Assigns the n parameters (counts[p] elements of elem_size bytes each, in
 * registration order) to buckets, PyTorch's way: walk the parameters in
 * reverse registration order (the order backward produces them), adding each
 * whole parameter to the open bucket, and close the bucket as soon as it
 * holds at least its cap in bytes: first_cap for the first bucket, cap for
 * every later one. The last bucket closes at the end, however full.
 * out[0..*n_buckets) receives the buckets in that order (out[0] holds the
 * last parameters); out has room for n buckets. DL_ERR_ARG for n < 0 or
 * n > DDP_MAX_PARAMS, a parameter of 0 elements, elem_size, first_cap or cap
 * of 0, or a NULL pointer (with n > 0). */
dl_status ddp_assign_buckets(const size_t *counts, int n, size_t elem_size, size_t first_cap, size_t cap,
                             ddp_bucket *out, int *n_buckets);

// ---- tasks 2 and 3: the reducer (reducer.c) ----

/* What one rank needs to overlap its gradient allreduces with backward.
 * The driver fills the first block and zeroes the rest before the first
 * step; your functions own the second block. */
typedef struct ddp_reducer {
    dl_comm *comm;
    dl_mlp *model;
    void *grads; /* the flat gradient buffer the buckets are views of: model->grads */
    dl_dtype grad_type; /* DL_F32, or model->grads16 in model->compute (DL_F16 or DL_BF16) under --amp (part 2) */
    const ddp_bucket *bucket; /* from ddp_assign_buckets, in launch order */
    int n_buckets;
    int accum; /* K: micro-batches per optimizer step (>= 1) */

    int sync; /* 1 on the micro-batch whose backward communicates */
    int next; /* the next bucket to launch */
    int ready_from; /* every parameter from this index on has its final gradient */
    dl_comm_req *req[DDP_MAX_BUCKETS]; /* the allreduces in flight */
    dl_status status; /* the first failure inside ddp_grad_ready, else DL_OK */
} ddp_reducer;

/* Task 2. Backward's callback (dl_mlp_ready_fn; ctx is the reducer): layer
 * `layer`'s gradients (grad, count elements of r->grad_type: its weight then
 * its bias) are final. On a micro-batch that communicates, start every
 * bucket whose gradients are now all final, strictly in bucket order: its
 * gradients divided so that the sum over the ranks is the average gradient
 * of the global batch, then an asynchronous sum-allreduce of the bucket's
 * view of r->grads, in r->grad_type. It cannot return a status: the first
 * failure goes into r->status. */
void ddp_grad_ready(void *ctx, int layer, void *grad, size_t count);

/* Task 2. After backward: waits for every bucket's allreduce. Fails (and
 * still waits for what was started) when r->status holds a failure or when
 * a bucket was never started. Leaves the reducer ready for the next step. */
dl_status ddp_finish(ddp_reducer *r);

/* A micro-batch: n rows, X (n, in) and y (n,) where the model reads them. */
typedef struct ddp_micro {
    const float *X;
    const int32_t *y;
    size_t n;
} ddp_micro;

typedef struct ddp_sgd {
    float lr, momentum, weight_decay;
} ddp_sgd;

/* Task 3. One optimizer step over r->accum micro-batches mb[0..accum), all of
 * the same size: forward, loss and backward of each, the gradients summed
 * over the micro-batches and the ranks, communication only on the last one;
 * then the SGD step. The update must equal one rank's step on the union of
 * every rank's micro-batches (accum · P · n rows). *loss = the mean of the
 * micro-batches' losses on this rank. loss may be NULL — the driver passes
 * NULL: then nothing is read back from the device (dl_mlp_loss's loss NULL),
 * and the step makes the host wait for the device nowhere but in the
 * allreduces' waits; the kit sums the losses on the device and reads them
 * once per epoch. */
dl_status ddp_step(ddp_reducer *r, const ddp_micro *mb, const ddp_sgd *opt, double *loss);

#ifdef __cplusplus
}
#endif
#endif /* LAB05_DDP_H */
