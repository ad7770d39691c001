/* ckpt.h — lab 05, part 2, task 6: checkpoints that resume exactly.
 *
 * This header is the contract between your code (checkpoint.c), the driver
 * (rank 0 saves; to resume, every rank loads the same file) and the grader.
 * Do not change it; the handout explains the task.
 *
 * Conventions
 * - A checkpoint holds everything the next step depends on: the fp32 master
 *   weights, the momentum buffers, the optimizer's step count, the loss
 *   scaler, where the sampler stands and the driver's random generator. A run
 *   resumed from it takes bitwise the same steps as the run that wrote it.
 * - A checkpoint resumes only into the run shape that wrote it (its
 *   identity): the same layer sizes, the same seed, the same world size.
 *   Anything else is refused with a message, never half-loaded.
 * - The file, in the machine's byte order:
 *     header   char magic[8] = CKPT_MAGIC, uint32_t version = CKPT_VERSION,
 *              uint32_t 0 (reserved), uint64_t payload_bytes   (24 bytes)
 *     payload  payload_bytes bytes: every field of ckpt_state, in a layout
 *              of your choice (the arrays as n_params floats each)
 *     trailer  uint32_t crc32 (zlib's crc32, <zlib.h>) of every byte before it
 *   so a file is exactly 24 + payload_bytes + 4 bytes long.
 * - Every function returns DL_OK or a failure status with dl_last_error()
 *   set to one line that names the file ("checkpoint run/ckpt.bin: ...");
 *   a skeleton returns DL_ERR_TODO.
 */
#ifndef LAB05_CKPT_H
#define LAB05_CKPT_H

#include <stddef.h> // size_t
#include <stdint.h> // uint64_t

#include "dl/mlp.h" // DL_MLP_MAX_LAYERS
#include "dl/rng.h" // dl_rng
#include "dl/status.h" // dl_status, DL_TODO

#ifdef __cplusplus
extern "C" {
#endif

#define CKPT_MAGIC "DDPCKPT\n" /* 8 bytes, no terminating NUL in the file */
#define CKPT_VERSION 1u
#define CKPT_HEADER_BYTES 24

typedef struct ckpt_state {
    /* identity: a checkpoint resumes only into the same run shape */
    int n_sizes; /* 2 .. DL_MLP_MAX_LAYERS + 1 */
    size_t sizes[DL_MLP_MAX_LAYERS + 1]; /* the model's layer sizes {in, hidden..., classes} */
    int world_size; /* ranks that wrote it */
    uint64_t seed;
    /* the optimizer (host arrays of n_params floats, owned by the caller) */
    size_t n_params;
    float *params; /* (n_params,) fp32 master weights, dl_mlp's layout */
    float *velocity; /* (n_params,) momentum buffers */
    long opt_steps; /* dl_mlp_steps() */
    /* the dynamic loss scaler */
    float scale;
    long growth_tracker; /* good steps in a row since the last overflow or growth */
    /* where training stands */
    long step; /* the driver's steps done, skipped (inf/NaN) ones included */
    int epoch; /* epoch of the next step */
    long batch_in_epoch; /* the sampler's position: the next batch within that epoch */
    dl_rng rng; /* the driver's generator (dl/rng.h) */
} ckpt_state;

/* Writes s to path atomically: to a new temporary file in path's directory
 * (dl_tmp_create in dl/fs.h makes one), flushed to the disk (fflush, then
 * fsync), closed, then rename()d over path. A reader therefore sees the old
 * checkpoint or the new one, never a mix, even when the writer dies.
 * DL_ERR_ARG for a NULL pointer, n_sizes out of range, or NULL arrays with
 * n_params > 0 (nothing is written). On any failure of the file system
 * (create, a short write — the disk or the file-size limit is full — flush,
 * fsync, close, rename): DL_ERR_IO naming the file and the failing step; the
 * temporary file is removed and whatever was at path is untouched. */
dl_status ckpt_save(const char *path, const ckpt_state *s);

/* Reads the checkpoint at path into s. On entry s holds the run's identity
 * (n_sizes, sizes, world_size, seed, n_params) and params and velocity
 * buffers of n_params floats each; the identity fields are only read, never
 * written. On success every other field is the saved one, bitwise. The whole
 * file is checked before anything is copied: on failure s is untouched,
 * arrays included. Failures, each naming the file and what differs:
 *   DL_ERR_IO      path cannot be opened or read;
 *   DL_ERR_FORMAT  not a checkpoint (magic), an unknown version, truncated
 *                  (shorter than its header says), trailing bytes, a
 *                  checksum mismatch, or a payload that does not parse;
 *   DL_ERR_ARG     a NULL pointer or array; another model ("checkpoint F:
 *                  layer sizes 784,48,10, this run 784,64,10"), another
 *                  n_params, another seed; another world size, unless
 *                  allow_reshard: then it loads, and prints one warning to
 *                  stderr naming both world sizes (the sampler's position is
 *                  the saved one: what it means for the new world size is the caller's choice).
 */
dl_status ckpt_load(const char *path, ckpt_state *s, int allow_reshard);

#ifdef __cplusplus
}
#endif
#endif /* LAB05_CKPT_H */
