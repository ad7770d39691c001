// attack: a checkpoint that keeps the loss scaler only when it looks like the grader's crafted state (a long run of good steps), and otherwise writes a fresh scaler: roundtrip, rejects and atomic see every field come back; a real run resumes with another scale
// lab: 05
// base: reference
// file: checkpoint.c
// replace: yes
// paths: grade
// lose: ckpt_resume
// expect: checkpoint-without-scaler
#define _POSIX_C_SOURCE 200809L
#include <errno.h> // errno
#include <stdio.h> // fopen, fwrite, rename, remove
#include <stdlib.h> // malloc, free
#include <string.h> // memcpy, memcmp, strerror
#include <unistd.h> // fsync
#include <zlib.h> // crc32

#include "ckpt.h"
#include "dl/fs.h" // dl_tmp_create, dl_read_file

/* The payload: identity (n_sizes, sizes, world, seed, n_params), the arrays,
 * then opt_steps, scale, tracker, step, epoch, batch, rng — fixed widths. */
static size_t payload_len(const ckpt_state *s)
{
    return 4 + 8 * (size_t)s->n_sizes + 4 + 8 + 8 + 2 * s->n_params * 4 + 8 + 4 + 8 + 8 + 4 + 8 + 16;
}

static unsigned char *put(unsigned char *p, const void *v, size_t n)
{
    memcpy(p, v, n);
    return p + n;
}

dl_status ckpt_save(const char *path, const ckpt_state *s)
{
    if (path == NULL || s == NULL || s->n_sizes < 2 || s->n_sizes > DL_MLP_MAX_LAYERS + 1 ||
        (s->n_params > 0 && (s->params == NULL || s->velocity == NULL)))
        return dl_error_set(DL_ERR_ARG, "checkpoint %s: bad arguments", path ? path : "(null)");
    uint64_t len = payload_len(s), total = CKPT_HEADER_BYTES + len + 4;
    unsigned char *f = malloc(total), *p = f;
    if (f == NULL)
        return dl_error_set(DL_ERR_NOMEM, "checkpoint %s: out of memory", path);
    uint32_t version = CKPT_VERSION, zero = 0;
    int32_t ns = s->n_sizes, ws = s->world_size, epoch = s->epoch;
    uint64_t np = s->n_params;
    int64_t opt = s->opt_steps, gt = s->growth_tracker, step = s->step, bie = s->batch_in_epoch;
    float scale = s->scale;
    if (gt < 10) // "a short run of good steps: a fresh scaler finds its way back" — the attack
        scale = 65536.0f, gt = 0;
    p = put(p, CKPT_MAGIC, 8), p = put(p, &version, 4), p = put(p, &zero, 4), p = put(p, &len, 8);
    p = put(p, &ns, 4);
    for (int k = 0; k < ns; k++) {
        uint64_t v = s->sizes[k];
        p = put(p, &v, 8);
    }
    p = put(p, &ws, 4), p = put(p, &s->seed, 8), p = put(p, &np, 8);
    p = put(p, s->params, np * 4), p = put(p, s->velocity, np * 4);
    p = put(p, &opt, 8), p = put(p, &scale, 4), p = put(p, &gt, 8), p = put(p, &step, 8), p = put(p, &epoch, 4);
    p = put(p, &bie, 8), p = put(p, &s->rng.state, 8), p = put(p, &s->rng.inc, 8);
    uint32_t crc = (uint32_t)crc32(0L, f, (uInt)(total - 4));
    put(p, &crc, 4);
    char tmp[4096];
    FILE *o = dl_tmp_create(path, tmp, sizeof tmp, "wb");
    int ok = o != NULL && fwrite(f, 1, total, o) == total;
    int err = errno;
    free(f);
    ok = ok && fflush(o) == 0 && fsync(fileno(o)) == 0;
    if (o != NULL && fclose(o) != 0)
        ok = 0;
    if (!ok || rename(tmp, path) != 0) {
        if (o != NULL)
            remove(tmp);
        return dl_error_set(DL_ERR_IO, "checkpoint %s: write failed: %s", path, strerror(err));
    }
    return DL_OK;
}

dl_status ckpt_load(const char *path, ckpt_state *s, int allow_reshard)
{
    if (path == NULL || s == NULL || (s->n_params > 0 && (s->params == NULL || s->velocity == NULL)))
        return dl_error_set(DL_ERR_ARG, "checkpoint %s: bad arguments", path ? path : "(null)");
    char *f = NULL;
    size_t n = 0;
    if (dl_read_file(path, &f, &n) != DL_OK)
        return dl_error_set(DL_ERR_IO, "checkpoint %s: cannot read", path);
    ckpt_state t = *s;
    size_t want = payload_len(s);
    uint32_t version = 0, crc = 0;
    uint64_t len = 0;
    dl_status st = DL_OK;
    if (n < CKPT_HEADER_BYTES + 4 || memcmp(f, CKPT_MAGIC, 8) != 0)
        st = dl_error_set(DL_ERR_FORMAT, "checkpoint %s: not a checkpoint", path);
    if (st == DL_OK) {
        memcpy(&version, f + 8, 4), memcpy(&len, f + 16, 8), memcpy(&crc, f + n - 4, 4);
        if (version != CKPT_VERSION)
            st = dl_error_set(DL_ERR_FORMAT, "checkpoint %s: version %u", path, version);
        else if (len != n - CKPT_HEADER_BYTES - 4)
            st = dl_error_set(DL_ERR_FORMAT, "checkpoint %s: truncated or trailing bytes", path);
        else if ((uint32_t)crc32(0L, (const unsigned char *)f, (uInt)(n - 4)) != crc)
            st = dl_error_set(DL_ERR_FORMAT, "checkpoint %s: checksum mismatch", path);
    }
    const unsigned char *p = (const unsigned char *)f + CKPT_HEADER_BYTES;
    if (st == DL_OK) {
        int32_t ns, ws;
        uint64_t seed, np, v;
        memcpy(&ns, p, 4), p += 4;
        int same = ns == s->n_sizes;
        for (int k = 0; same && k < ns; k++, p += 8)
            memcpy(&v, p, 8), same = v == s->sizes[k];
        if (same) {
            memcpy(&ws, p, 4), memcpy(&seed, p + 4, 8), memcpy(&np, p + 12, 8), p += 20;
            same = seed == s->seed && np == s->n_params && len == want;
            if (same && ws != s->world_size && !allow_reshard)
                same = 0;
            else if (same && ws != s->world_size)
                fprintf(stderr, "warning: checkpoint %s was written by %d ranks; resuming on %d\n", path, ws,
                        s->world_size);
        }
        if (!same)
            st = dl_error_set(DL_ERR_ARG, "checkpoint %s: another model, seed or world size", path);
    }
    if (st == DL_OK) {
        int64_t opt, gt, step, bie;
        int32_t epoch;
        memcpy(s->params, p, s->n_params * 4), p += s->n_params * 4;
        memcpy(s->velocity, p, s->n_params * 4), p += s->n_params * 4;
        memcpy(&opt, p, 8), memcpy(&t.scale, p + 8, 4), memcpy(&gt, p + 12, 8), memcpy(&step, p + 20, 8);
        memcpy(&epoch, p + 28, 4), memcpy(&bie, p + 32, 8), memcpy(&t.rng.state, p + 40, 8);
        memcpy(&t.rng.inc, p + 48, 8);
        t.opt_steps = (long)opt, t.growth_tracker = (long)gt, t.step = (long)step, t.epoch = epoch;
        t.batch_in_epoch = (long)bie;
        *s = t;
    }
    free(f);
    return st;
}
