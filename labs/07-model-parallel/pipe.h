/* pipe.h — lab 07, part 2: pipeline parallelism. This header is the
 * contract between your code (pipe.c), the driver and the grader. Do not
 * change it; the handout (README.md) explains each task.
 *
 * The pipeline. The kit's MLP of L layers is cut into P stages of
 * consecutive layers, one stage per rank: rank s holds layers first ..
 * last − 1 (task 4 says which). A step takes m micro-batches of n rows
 * each; micro-batch i goes through stage 0, 1, ..., P − 1 forward and back
 * again backward. Stage s receives micro-batch i's input (n × in values)
 * from stage s − 1 and sends its output (n × out) to stage s + 1; backward,
 * it receives the gradient at its output from s + 1 and sends the gradient
 * at its input to s − 1. Stage 0's input is the data; stage P − 1's output
 * is the logits, whose loss starts backward.
 *
 * The step's loss is the mean of the m micro-batches' mean losses, so that
 * m micro-batches of n rows make exactly the step one batch of m·n rows
 * would: each micro-batch's gradient weighs 1/m.
 *
 * The kit's calls (pipe_kit.c): the stage's arithmetic and its memory. A
 * micro-batch's *slot* holds what its backward will need of its forward:
 * the stage's input and every layer's output (its activations). It is
 * taken by pp_in and given back by pp_release, and the kit measures the
 * peak of the slots held at once. The two gradients that travel live in
 * the stage's own buffers, one each, not in a slot.
 * - pp_in(st, i): micro-batch i's input on this stage (n × in): takes i's
 *   slot. At stage 0 it holds the rows already; elsewhere receive them into
 *   it. NULL when i is out of range or its slot is taken (said by
 *   dl_last_error).
 * - pp_forward(st, i): the stage's layers on pp_in's values; at the last
 *   stage also the loss of micro-batch i and its gradient at the logits.
 * - pp_out(st, i): i's output after pp_forward (n × out), in its slot: what
 *   to send on (not at the last stage).
 * - pp_dout(st, i): the stage's buffer for the gradient at i's output
 *   (n × out): receive it into this right before pp_backward(st, i) (not at
 *   the last stage).
 * - pp_backward(st, i, scale): backward of micro-batch i through the
 *   stage's layers, its weights' gradients added to the stage's. At the
 *   last stage it starts from the gradient of i's own mean loss times scale:
 *   the weight of i's loss in the step's; elsewhere from what arrived in
 *   pp_dout, already weighted (scale is not used there). Needs i's slot,
 *   forwarded and not yet backward.
 * - pp_din(st, i): the gradient at i's input after pp_backward(st, i)
 *   (n × in), in the stage's buffer until the next pp_backward: what to
 *   send back (not at stage 0).
 * - pp_release(st, i): gives back i's slot, once its backward is done (the
 *   gradient in pp_din may still be on its way).
 *
 * Conventions
 * - pp_gpipe and pp_1f1b run one step's forward and backward passes of all
 *   m micro-batches on this stage, every stage calling the same function
 *   together; the kit zeroes the gradients before and updates the weights
 *   after. They return with every slot given back.
 * - Move data only with dl_comm_send, dl_comm_recv and dl_comm_sendrecv on
 *   st->comm (a send pairs with a recv, a sendrecv with a sendrecv); buffers
 *   are st->dev's (host memory on the CPU). No collective, no allocation.
 * - Return DL_OK, or the status of the first call that failed. A skeleton
 *   returns DL_ERR_TODO.
 */
#ifndef LAB07_PIPE_H
#define LAB07_PIPE_H

#include <stddef.h> // size_t

#include "dl/comm.h" // dl_comm_send, dl_comm_recv, dl_comm_sendrecv
#include "dl/device.h" // dl_device
#include "dl/status.h" // dl_status, DL_TODO

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pp_kit pp_kit;

/* One rank's stage of one step, as the kit set it up. */
typedef struct pp_stage {
    dl_comm *comm;
    const dl_device *dev;
    int s, P; /* this stage (its rank), the stages */
    int m; /* micro-batches in the step */
    size_t n; /* rows per micro-batch */
    size_t in, out; /* values per row arriving (the stage's input) and leaving (its output) */
    int first, last; /* its layers: first .. last − 1 (pp_layers) */
    pp_kit *kit; /* the kit's: slots, records */
} pp_stage;

// ---- the kit's calls (pipe_kit.c; see above) ----

float *pp_in(pp_stage *st, int i);
dl_status pp_forward(pp_stage *st, int i);
float *pp_out(pp_stage *st, int i);
float *pp_dout(pp_stage *st, int i);
dl_status pp_backward(pp_stage *st, int i, float scale);
float *pp_din(pp_stage *st, int i);
void pp_release(pp_stage *st, int i);

// ---- task 4: the stages (pipe.c) ----

/* Stage s of P's layers of a model of L layers, first .. last − 1: P runs of
 * consecutive layers, together every layer once, their lengths as equal as
 * they can be (the first L mod P one longer). DL_ERR_ARG unless
 * 1 <= P <= L and 0 <= s < P. */
dl_status pp_layers(int L, int P, int s, int *first, int *last);

// ---- task 5: all forward, then all backward (GPipe; pipe.c) ----

dl_status pp_gpipe(pp_stage *st);

// ---- task 6: one forward, one backward (1F1B; pipe.c) ----

/* The same step as pp_gpipe, in an order that holds at most P − s slots at
 * once on stage s (fewer when m is smaller). */
dl_status pp_1f1b(pp_stage *st);

#ifdef __cplusplus
}
#endif
#endif /* LAB07_PIPE_H */
