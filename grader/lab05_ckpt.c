/* lab05_ckpt.c — lab 05 task 6, checkpoints: its items (the table is
 * lab05.c's; the wrappers of ckpt_save and ckpt_load are in lab05_calls.c).
 *
 * The files the student's code writes live only in the worker's sandbox
 * (relative paths under its work directory, so both programs name them the
 * same). The tests reach them through a few file operations of their own
 * (fs_*), recorded in the worker and replayed here like the student's
 * calls: the judge sees the bytes ckpt_save wrote and judges the format
 * itself (magic, version, sizes, zlib's crc32, the arrays stored verbatim),
 * edits them (a cut, a flipped byte, parameters of its own with the crc32
 * recomputed) and judges what ckpt_load made of each. ckpt_resume runs the
 * driver: stopped, saved and resumed, against the run that never stopped. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h> // opendir
#include <errno.h> // errno, EEXIST
#include <stdint.h> // uint32_t
#include <stdio.h> // snprintf
#include <stdlib.h> // malloc, free
#include <string.h> // strerror, memcmp
#include <sys/stat.h> // mkdir
#include <zlib.h> // crc32

#include "ckpt.h"
#include "dl/fs.h" // dl_read_file
#include "drivers.h" // gr_run_driver
#include "grader.h"
#include "lab05_ref.h" // the workload, AMP_INIT, AMP_GROWTH
#include "replay.h" // gr_call_begin, gr_is_worker

#define CKT_T "the grader's file access"

extern size_t gr_ckpt_fsize_limit; /* the ckpt_save wrapper's (lab05_calls.c) */

// ---- file operations of the test, run in the worker, replayed here ----

/* dir exists and is empty. */
static dl_status fs_mkdir(const char *dir)
{
    gr_call c;
    gr_call_begin(&c, "grader: mkdir", CKT_T);
    dl_status st = DL_OK;
    if (gr_call_live(&c)) {
        if (mkdir(dir, 0755) != 0 && errno != EEXIST)
            st = dl_error_set(DL_ERR_IO, "grader: cannot create %s: %s", dir, strerror(errno));
        DIR *d = st == DL_OK ? opendir(dir) : NULL;
        struct dirent *e;
        while (d != NULL && (e = readdir(d)) != NULL) {
            char p[600];
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                remove(p);
        }
        if (d != NULL)
            closedir(d);
    }
    return gr_call_end(&c, st);
}

/* The whole file: *bytes (malloc'ed, free it) of *len bytes. */
static dl_status fs_read(const char *path, unsigned char **bytes, size_t *len)
{
    gr_call c;
    gr_call_begin(&c, "grader: read file", CKT_T);
    dl_status st = DL_OK;
    char *text = NULL;
    size_t n = 0;
    if (gr_call_live(&c) && (st = dl_read_file(path, &text, &n)) != DL_OK)
        n = 0;
    gr_out(&c, &n, sizeof n);
    *bytes = gr_out_alloc(&c, text, n);
    *len = n;
    return gr_call_end(&c, st);
}

static dl_status fs_write(const char *path, const unsigned char *bytes, size_t len)
{
    gr_call c;
    gr_call_begin(&c, "grader: write file", CKT_T);
    dl_status st = DL_OK;
    if (gr_call_live(&c)) {
        FILE *f = fopen(path, "wb");
        if (f == NULL || fwrite(bytes, 1, len, f) != len)
            st = dl_error_set(DL_ERR_IO, "grader: cannot write %s: %s", path, strerror(errno));
        if (f != NULL && fclose(f) != 0 && st == DL_OK)
            st = dl_error_set(DL_ERR_IO, "grader: cannot write %s: %s", path, strerror(errno));
    }
    return gr_call_end(&c, st);
}

static dl_status fs_remove(const char *path)
{
    gr_call c;
    gr_call_begin(&c, "grader: remove file", CKT_T);
    dl_status st = DL_OK;
    if (gr_call_live(&c) && remove(path) != 0)
        st = dl_error_set(DL_ERR_IO, "grader: cannot remove %s: %s", path, strerror(errno));
    return gr_call_end(&c, st);
}

/* The names in dir but "." and "..", space-separated, into names[512]. */
static dl_status fs_list(const char *dir, char names[512])
{
    gr_call c;
    gr_call_begin(&c, "grader: list directory", CKT_T);
    dl_status st = DL_OK;
    memset(names, 0, 512);
    if (gr_call_live(&c)) {
        DIR *d = opendir(dir);
        struct dirent *e;
        size_t at = 0;
        if (d == NULL)
            st = dl_error_set(DL_ERR_IO, "grader: cannot list %s: %s", dir, strerror(errno));
        while (d != NULL && (e = readdir(d)) != NULL)
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 && at < 500)
                at += (size_t)snprintf(names + at, 512 - at, "%s%s", at ? " " : "", e->d_name);
        if (d != NULL)
            closedir(d);
        names[511] = '\0';
    }
    gr_out(&c, names, 512);
    return gr_call_end(&c, st);
}

// ---- crafted states ----

#define CKT_MAX_N 4096

typedef struct ckt_run {
    ckpt_state s;
    float params[CKT_MAX_N], velocity[CKT_MAX_N];
} ckt_run;

static size_t ckt_count(const size_t *sizes, int n_sizes)
{
    size_t n = 0;
    for (int l = 0; l + 1 < n_sizes; l++)
        n += sizes[l] * sizes[l + 1] + sizes[l + 1];
    return n;
}

/* A run's identity with zeroed state and arrays. */
static void ckt_identity(ckt_run *r, const size_t *sizes, int n_sizes, int world, uint64_t seed)
{
    memset(r, 0, sizeof *r);
    r->s.n_sizes = n_sizes;
    memcpy(r->s.sizes, sizes, (size_t)n_sizes * sizeof *sizes);
    r->s.world_size = world;
    r->s.seed = seed;
    r->s.n_params = ckt_count(sizes, n_sizes);
    r->s.params = r->params;
    r->s.velocity = r->velocity;
}

/* Everything a resume needs, none of it zero, every array element distinct
 * (-0, a subnormal and the largest float among them: bitwise is bitwise). */
static void ckt_fill(ckt_run *r, uint64_t salt)
{
    dl_rng g;
    dl_rng_seed(&g, 1234 + salt, 5);
    for (size_t k = 0; k < r->s.n_params; k++) {
        r->params[k] = (float)(dl_rng_uniform(&g) - 0.5) * 0.2f;
        r->velocity[k] = (float)(dl_rng_uniform(&g) - 0.5) * 1e-3f;
    }
    r->params[1] = -0.0f;
    r->params[2] = 1e-40f;
    r->velocity[3] = 3.4028235e38f;
    r->s.opt_steps = 1234 + (long)salt;
    r->s.scale = 8192.0f; // 2^13
    r->s.growth_tracker = 37;
    r->s.step = 1240 + (long)salt; // skipped steps count here, not in opt_steps
    r->s.epoch = 3;
    r->s.batch_in_epoch = 17;
    dl_rng_seed(&r->s.rng, 99, 7);
    for (int k = 0; k < 11; k++)
        dl_rng_u32(&r->s.rng);
}

static const size_t ckt_sizes[] = {20, 12, 5};
#define CKT_NS 3
#define CKT_WORLD 4
#define CKT_SEED 7

// ---- judging a file and a loaded state ----

/* The offset of n floats a[0..n) stored verbatim in f, or (size_t)-1. */
static size_t ckt_find(const unsigned char *f, size_t len, const float *a, size_t n)
{
    size_t b = n * sizeof *a;
    for (size_t at = 0; b > 0 && at + b <= len; at++)
        if (memcmp(f + at, a, b) == 0)
            return at;
    return (size_t)-1;
}

static uint32_t ckt_crc(const unsigned char *f, size_t n)
{
    return (uint32_t)crc32(0L, f, (uInt)n);
}

/* Fails unless the file follows ckpt.h: header, payload, crc32 trailer,
 * both arrays verbatim. Returns where the parameters start. */
static size_t ckt_check_format(const char *path, const unsigned char *f, size_t len, const ckpt_state *s)
{
    size_t n = s->n_params, arrays = 2 * n * sizeof(float);
    if (len < CKPT_HEADER_BYTES + 4 || memcmp(f, CKPT_MAGIC, 8) != 0)
        GR_FAIL("%s (%zu bytes) does not start with the magic CKPT_MAGIC (ckpt.h)", path, len);
    uint32_t version, crc;
    uint64_t payload;
    memcpy(&version, f + 8, 4);
    memcpy(&payload, f + 16, 8);
    memcpy(&crc, f + len - 4, 4);
    if (version != CKPT_VERSION)
        GR_FAIL("%s: version %u in the header, ckpt.h says CKPT_VERSION (%u)", path, version, CKPT_VERSION);
    if (payload != len - CKPT_HEADER_BYTES - 4)
        GR_FAIL("%s: the header says %llu payload bytes, the file holds %zu (24 header bytes, the payload, a 4-byte "
                "crc32)",
                path, (unsigned long long)payload, len - CKPT_HEADER_BYTES - 4);
    if (crc != ckt_crc(f, len - 4))
        GR_FAIL("%s: the last 4 bytes are not zlib's crc32 of every byte before them (0x%08x, expected 0x%08x)", path,
                crc, ckt_crc(f, len - 4));
    if (payload < arrays)
        GR_FAIL(GR_DIAG("checkpoint-without-momentum") "%s: a payload of %llu bytes cannot hold the %zu parameters "
                                                       "and their momentum buffers (%zu bytes)",
                path, (unsigned long long)payload, n, arrays);
    size_t at = ckt_find(f, len, s->params, s->n_params);
    if (at == (size_t)-1)
        GR_FAIL("%s: the %zu parameters are not in the file as n_params floats, one after the other (ckpt.h)", path,
                s->n_params);
    if (ckt_find(f, len, s->velocity, s->n_params) == (size_t)-1)
        GR_FAIL(GR_DIAG("checkpoint-without-momentum") "%s: the momentum buffers (velocity) are not in the file: a "
                                                       "resumed run restarts momentum from zero and takes other steps",
                path);
    return at;
}

/* The first element where got and want differ bitwise, or -1. */
static long ckt_diff(const float *got, const float *want, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (memcmp(&got[k], &want[k], sizeof *got) != 0)
            return (long)k;
    return -1;
}

static int ckt_all_zero(const float *a, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (a[k] != 0.0f)
            return 0;
    return 1;
}

/* Fails, naming the mistake, unless got (what ckpt_load left) equals want bitwise. */
static void ckt_check_state(const char *what, const ckpt_state *got, const ckpt_state *want)
{
    const ckpt_state *i = want; // every caller loads into the identity it saved from
    if (got->n_sizes != i->n_sizes || memcmp(got->sizes, i->sizes, sizeof got->sizes) != 0 ||
        got->world_size != i->world_size || got->seed != i->seed || got->n_params != i->n_params)
        GR_FAIL("%s: ckpt_load wrote the run's identity (n_sizes, sizes, world_size, seed or n_params): those are "
                "its inputs (ckpt.h)",
                what);
    size_t n = want->n_params;
    long k = ckt_diff(got->params, want->params, n);
    if (k >= 0) {
        float g = got->params[k], w = want->params[k];
        uint32_t gb, wb;
        memcpy(&gb, &g, sizeof gb);
        memcpy(&wb, &w, sizeof wb);
        GR_FAIL(GR_DIAG("params-not-restored") "%s: params[%ld] = %.9g (0x%08x), saved %.9g (0x%08x): the "
                                               "master weights must come back bitwise",
                what, k, (double)g, (unsigned)gb, (double)w, (unsigned)wb);
    }
    k = ckt_diff(got->velocity, want->velocity, n);
    if (k >= 0) {
        double g = got->velocity[k], w = want->velocity[k];
        const char *zero = ckt_all_zero(got->velocity, n) ? " (all of it zero: not restored at all)" : "";
        GR_FAIL(GR_DIAG("checkpoint-without-momentum") "%s: velocity[%ld] = %.9g, saved %.9g%s: without its momentum "
                                                       "buffers a resumed SGD takes other steps",
                what, k, g, w, zero);
    }
    // (plain values in the messages' arguments: cppcheck 2.10 cannot parse member accesses there)
    double gs = got->scale, ws = want->scale;
    long gt = got->growth_tracker, wt = want->growth_tracker, gb = got->batch_in_epoch, wb = want->batch_in_epoch;
    long gstep = got->step, wstep = want->step, gopt = got->opt_steps, wopt = want->opt_steps;
    int ge = got->epoch, we = want->epoch;
    unsigned long long grs = got->rng.state, gri = got->rng.inc, wrs = want->rng.state, wri = want->rng.inc;
    if (memcmp(&got->scale, &want->scale, sizeof got->scale) != 0 || gt != wt)
        GR_FAIL(GR_DIAG("checkpoint-without-scaler") "%s: loss scale %g and growth tracker %ld, saved %g and %ld: a "
                                                     "resumed AMP run restarts the scaler, skipping or growing at "
                                                     "other steps",
                what, gs, gt, ws, wt);
    if (ge != we || gb != wb)
        GR_FAIL(GR_DIAG("sampler-position-not-restored") "%s: epoch %d, batch %ld of it, saved epoch %d, batch %ld: "
                                                         "a resumed run would see other batches (the sampler's "
                                                         "order depends on the epoch, the position on the batch)",
                what, ge, gb, we, wb);
    if (gopt != wopt || gstep != wstep)
        GR_FAIL(GR_DIAG("step-not-restored") "%s: step %ld and optimizer steps %ld, saved %ld and %ld: the learning "
                                             "rate schedule and the logs restart",
                what, gstep, gopt, wstep, wopt);
    if (grs != wrs || gri != wri)
        GR_FAIL(GR_DIAG("rng-not-restored") "%s: the generator's state 0x%016llx/0x%016llx, saved "
                                            "0x%016llx/0x%016llx: a resumed run draws other numbers",
                what, grs, gri, wrs, wri);
}

// ---- the items ----

/* Empties dir, saves the crafted state (salt 0) to path in it and reads the
 * file back: *f (malloc'ed, free it) of *len bytes, judged against ckpt.h.
 * Returns where the parameters start in it. */
static size_t ckt_save_read(const char *dir, const char *path, ckt_run *saved, unsigned char **f, size_t *len)
{
    GR_OK(fs_mkdir(dir));
    ckt_identity(saved, ckt_sizes, CKT_NS, CKT_WORLD, CKT_SEED);
    ckt_fill(saved, 0);
    GR_OK(ckpt_save(path, &saved->s));
    *f = NULL;
    *len = 0;
    GR_OK(fs_read(path, f, len));
    return ckt_check_format(path, *f, *len, &saved->s);
}

GR_TEST(test_ckpt_roundtrip)
{
    static ckt_run saved, got;
    const char *a = "ckpt_roundtrip/a.ckpt", *b = "ckpt_roundtrip/b.ckpt";
    unsigned char *f = NULL;
    size_t len = 0, at = ckt_save_read("ckpt_roundtrip", a, &saved, &f, &len);
    // the bytes under another name, the first gone: only the file can carry the state
    GR_OK(fs_write(b, f, len));
    GR_OK(fs_remove(a));
    ckt_identity(&got, ckt_sizes, CKT_NS, CKT_WORLD, CKT_SEED);
    GR_OK(ckpt_load(b, &got.s, 0));
    ckt_check_state("saved, then loaded into a zeroed state", &got.s, &saved.s);
    // parameters the grader wrote into the file, crc32 recomputed: load reads what is there
    for (size_t k = 0; k < saved.s.n_params; k++)
        saved.params[k] = -2.0f * saved.params[k] + 1.0f;
    memcpy(f + at, saved.params, saved.s.n_params * sizeof(float));
    uint32_t crc = ckt_crc(f, len - 4);
    memcpy(f + len - 4, &crc, 4);
    GR_OK(fs_write(b, f, len));
    ckt_identity(&got, ckt_sizes, CKT_NS, CKT_WORLD, CKT_SEED);
    dl_status st = ckpt_load(b, &got.s, 0);
    if (st != DL_OK)
        GR_FAIL("%s with other parameters written in by the grader and its crc32 recomputed: ckpt_load returned %s "
                "(%s); a valid checkpoint must load",
                b, dl_status_name(st), dl_last_error());
    ckt_check_state("a checkpoint whose parameters the grader rewrote", &got.s, &saved.s);
    free(f);
}
END_TEST

/* Loads path into a state filled with a pattern; fails unless ckpt_load
 * refused it, named the file, and left the state untouched. */
static void ckt_refuse(const char *path, int reshard, const char *what, const char *diag)
{
    static ckt_run r, before;
    ckt_identity(&r, ckt_sizes, CKT_NS, CKT_WORLD, CKT_SEED);
    ckt_fill(&r, 77); // not what any file holds
    before = r;
    dl_status st = ckpt_load(path, &r.s, reshard);
    if (st == DL_OK)
        GR_FAIL("%s%s (%s): ckpt_load returned DL_OK; it must refuse it", diag, path, what);
    if (strstr(dl_last_error(), path) == NULL)
        GR_FAIL("%s (%s): ckpt_load refused it (%s) but its message does not name the file: \"%s\"", path, what,
                dl_status_name(st), dl_last_error());
    const ckpt_state *a = &r.s, *b = &before.s;
    if (a->n_sizes != b->n_sizes || memcmp(a->sizes, b->sizes, sizeof a->sizes) != 0 ||
        a->world_size != b->world_size || a->seed != b->seed || a->n_params != b->n_params ||
        a->opt_steps != b->opt_steps || memcmp(&a->scale, &b->scale, sizeof a->scale) != 0 ||
        a->growth_tracker != b->growth_tracker || a->step != b->step || a->epoch != b->epoch ||
        a->batch_in_epoch != b->batch_in_epoch || a->rng.state != b->rng.state || a->rng.inc != b->rng.inc ||
        memcmp(r.params, before.params, sizeof r.params) != 0 ||
        memcmp(r.velocity, before.velocity, sizeof r.velocity) != 0)
        GR_FAIL("%s (%s): ckpt_load refused it but changed the state it was given: on failure s is untouched "
                "(check the whole file before copying anything)",
                path, what);
}

/* Saves the crafted state under another identity to path. */
static void ckt_save_as(const char *path, const size_t *sizes, int n_sizes, int world, uint64_t seed)
{
    static ckt_run o;
    ckt_identity(&o, sizes, n_sizes, world, seed);
    ckt_fill(&o, 0);
    GR_OK(ckpt_save(path, &o.s));
}

GR_TEST(test_ckpt_rejects)
{
    static ckt_run saved, got;
    const char *good = "ckpt_rejects/good.ckpt", *bad = "ckpt_rejects/bad.ckpt";
    unsigned char *f = NULL;
    size_t len = 0, at = ckt_save_read("ckpt_rejects", good, &saved, &f, &len);
    unsigned char *e = malloc(len + 1);
    struct {
        const char *what, *diag;
        size_t cut; /* bytes kept, or len + 1: one trailing byte */
        long flip; /* offset of a byte xor 0x10, or -1 */
        int fix_crc; /* recompute the crc32 after the flip */
    } cases[] = {
        {"a byte flipped in the parameters", GR_DIAG("checksum-not-checked"), len, (long)(at + 4 * 7 + 1), 0},
        {"a byte flipped in the crc32 itself", GR_DIAG("checksum-not-checked"), len, (long)len - 2, 0},
        {"empty", "", 0, -1, 0},
        {"cut inside the header", "", CKPT_HEADER_BYTES / 2, -1, 0},
        {"the header only", GR_DIAG("truncation-not-detected"), CKPT_HEADER_BYTES, -1, 0},
        {"cut in the middle of the parameters", GR_DIAG("truncation-not-detected"), at + saved.s.n_params * 2, -1, 0},
        {"one byte short", GR_DIAG("truncation-not-detected"), len - 1, -1, 0},
        {"one trailing byte", GR_DIAG("trailing-bytes-accepted"), len + 1, -1, 0},
        {"another magic (crc32 recomputed)", "", len, 0, 1},
        {"version 17 (crc32 recomputed)", GR_DIAG("version-not-checked"), len, 8, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t n = cases[c].cut;
        memcpy(e, f, len);
        e[len] = 0;
        if (cases[c].flip >= 0)
            e[cases[c].flip] ^= 0x10; // at 0: "DDP..." becomes "TDP..."; at 8: version 1 becomes 17
        if (cases[c].fix_crc) {
            uint32_t crc = ckt_crc(e, len - 4);
            memcpy(e + len - 4, &crc, 4);
        }
        GR_OK(fs_write(bad, e, n));
        ckt_refuse(bad, 0, cases[c].what, cases[c].diag);
    }
    // another run shape, another seed, another world size
    const size_t wider[] = {20, 16, 5};
    ckt_save_as("ckpt_rejects/shape.ckpt", wider, CKT_NS, CKT_WORLD, CKT_SEED);
    ckt_refuse("ckpt_rejects/shape.ckpt", 1, "layer sizes 20,16,5 into a run of 20,12,5",
               GR_DIAG("identity-not-checked"));
    ckt_save_as("ckpt_rejects/seed.ckpt", ckt_sizes, CKT_NS, CKT_WORLD, CKT_SEED + 1);
    ckt_refuse("ckpt_rejects/seed.ckpt", 1, "seed 8 into a run of seed 7", GR_DIAG("identity-not-checked"));
    ckt_save_as("ckpt_rejects/world.ckpt", ckt_sizes, CKT_NS, 2, CKT_SEED);
    ckt_refuse("ckpt_rejects/world.ckpt", 0, "written by 2 ranks, loaded by 4 without allow_reshard",
               GR_DIAG("identity-not-checked"));
    ckt_identity(&got, ckt_sizes, CKT_NS, CKT_WORLD, CKT_SEED);
    dl_status st = ckpt_load("ckpt_rejects/world.ckpt", &got.s, 1);
    if (st != DL_OK)
        GR_FAIL(GR_DIAG("reshard-refused") "ckpt_rejects/world.ckpt, written by 2 ranks, loaded by 4 with "
                                           "allow_reshard: ckpt_load returned %s (%s); with allow_reshard it loads "
                                           "(and warns)",
                dl_status_name(st), dl_last_error());
    ckt_check_state("written by 2 ranks, loaded by 4 with allow_reshard", &got.s, &saved.s);
    free(e);
    free(f);
}
END_TEST

GR_TEST(test_ckpt_atomic)
{
    static ckt_run old, fresh, got;
    const char *dir = "ckpt_atomic", *path = "ckpt_atomic/run.ckpt";
    unsigned char *f = NULL;
    size_t len = 0;
    ckt_save_read(dir, path, &old, &f, &len);
    free(f);
    ckt_identity(&fresh, ckt_sizes, CKT_NS, CKT_WORLD, CKT_SEED);
    ckt_fill(&fresh, 1000);
    // the disk fills up half-way through the next save
    gr_ckpt_fsize_limit = len / 2;
    dl_status st = ckpt_save(path, &fresh.s);
    gr_ckpt_fsize_limit = 0;
    char err[1100], names[512];
    snprintf(err, sizeof err, "%s", dl_last_error());
    GR_OK(fs_list(dir, names));
    ckt_identity(&got, ckt_sizes, CKT_NS, CKT_WORLD, CKT_SEED);
    dl_status ld = ckpt_load(path, &got.s, 0);
    if (ld != DL_OK && st == DL_OK)
        GR_FAIL(GR_DIAG("write-errors-ignored") "a save that hit the file-size limit (%zu bytes) half-way returned "
                                                "DL_OK and left %s unreadable (ckpt_load: %s: %s): an incomplete "
                                                "file was renamed over it. Check what fwrite, fflush, fsync and "
                                                "fclose return, and rename only a complete file",
                len / 2, path, dl_status_name(ld), dl_last_error());
    if (ld != DL_OK)
        GR_FAIL(GR_DIAG("non-atomic-write") "a save that hit the file-size limit (%zu bytes) half-way left %s "
                                            "unreadable (ckpt_load: %s: %s): the old checkpoint was overwritten in "
                                            "place. Write a temporary file beside it, then rename it over path",
                len / 2, path, dl_status_name(ld), dl_last_error());
    long now_step = got.s.step, old_step = old.s.step;
    if (now_step != old_step)
        GR_FAIL(GR_DIAG("non-atomic-write") "a save that hit the file-size limit half-way: %s now holds step %ld, "
                                            "not the old checkpoint's %ld",
                path, now_step, old_step);
    ckt_check_state("the old checkpoint after a failed save", &got.s, &old.s);
    if (strcmp(names, "run.ckpt") != 0)
        GR_FAIL(GR_DIAG("temp-file-left-behind") "after a save that failed half-way, %s holds \"%s\": remove the "
                                                 "temporary file on every failure",
                dir, names);
    if (st == DL_OK)
        GR_FAIL(GR_DIAG("write-errors-ignored") "ckpt_save returned DL_OK though the file-size limit (%zu of a "
                                                "%zu-byte checkpoint) cut its write short: check what fwrite, "
                                                "fflush, fsync and fclose return",
                len / 2, len);
    if (strstr(err, path) == NULL)
        GR_FAIL("the failed ckpt_save returned %s, but its message does not name %s: \"%s\"", dl_status_name(st), path,
                err);
    // and with room again, the new checkpoint replaces the old one
    GR_OK(ckpt_save(path, &fresh.s));
    GR_OK(fs_list(dir, names));
    ckt_identity(&got, ckt_sizes, CKT_NS, CKT_WORLD, CKT_SEED);
    GR_OK(ckpt_load(path, &got.s, 0));
    ckt_check_state("a save over an existing checkpoint", &got.s, &fresh.s);
    if (strcmp(names, "run.ckpt") != 0)
        GR_FAIL(GR_DIAG("temp-file-left-behind") "after a save that succeeded, %s holds \"%s\", expected only "
                                                 "run.ckpt",
                dir, names);
}
END_TEST

// ---- task 6 end to end: the driver stops, saves, and resumes exactly ----

/* The driver on 2 ranks with the equivalence runs' workload in --amp fp16,
 * the loss scale at 1024 and doubled after every 3 good steps (amp_training's
 * scaler: it changes before the checkpoint, and the good steps counted at
 * the checkpoint decide when it changes next), plus extra: the flags of
 * amp_training's 2-rank run (gr_run_amp's, less its --poison-step -1: no
 * inf), which is the run that never stopped. */
static int run_resume(const char *name, const char *extra)
{
    char args[1600];
    snprintf(args, sizeof args, "%s --batch-size 32 --amp fp16 --init-scale %g --growth-interval %d --probe-every 0 %s",
             gr_workload_flags(), AMP_INIT, AMP_GROWTH, extra);
    return gr_run_driver(2, name, args);
}

GR_TEST(test_ckpt_resume)
{
    const int P = 2;
    // stopped mid-epoch (62 steps per epoch here) after 5 steps, between two growths of the scale (after steps 3
    // and 6): the resumed steps 6 to 8 run at the scale saved, then at the one its count of good steps grows to
    const long stop = 5, steps = AMP_STEPS;
    const char *full = "amp2"; // amp_training's run on 2 ranks: --amp fp16, batch 32, AMP_STEPS steps, never stopped
    gr_run_amp(full, P, 32, steps, -1, 0, DL_F16);
    char extra[1400];
    snprintf(extra, sizeof extra, "--max-steps %ld --checkpoint-dir '%s/ck'", stop, gr_path("resa"));
    int rc = run_resume("resa", extra);
    if (rc != 0)
        gr_fail_run("resa", rc);
    snprintf(extra, sizeof extra, "--max-steps %ld --resume '%s/ck/latest' --dump '%s/dump'", steps, gr_path("resa"),
             gr_path("resb"));
    rc = run_resume("resb", extra);
    if (rc != 0)
        gr_fail_run("resb", rc);
    for (int r = 0; r < P; r++) {
        // the loss scale of every step after the resume: the scaler's state came back
        long nf = 0, nb = 0;
        amp_row *all = gr_read_amp(full, r, &nf), *res = gr_read_amp("resb", r, &nb);
        if (nf != steps || nb != steps - stop)
            GR_FAIL("rank %d: the run that never stopped recorded %ld steps (expected %ld), the resumed one %ld "
                    "(expected %ld)",
                    r, nf, steps, nb, steps - stop);
        for (long k = 0; k < nb; k++) {
            const amp_row *f = &all[stop + k], *b = &res[k];
            if (b->scale != f->scale)
                GR_FAIL(GR_DIAG("checkpoint-without-scaler") "rank %d, step %ld of the resumed run: loss scale %g, "
                                                             "the run that never stopped had %g: the loss scaler "
                                                             "(its scale and its count of good steps) did not come "
                                                             "back from the checkpoint",
                        r, stop + k + 1, b->scale, f->scale);
        }
        free(all), free(res);
        char a[64], b[64];
        size_t na = 0, nbp = 0;
        snprintf(a, sizeof a, "%s/dump/params.%d.npy", full, r);
        snprintf(b, sizeof b, "resb/dump/params.%d.npy", r);
        float *pa = gr_load_npy(a, &na), *pb = gr_load_npy(b, &nbp);
        if (na != nbp || memcmp(pa, pb, na * sizeof *pa) != 0) {
            size_t k = 0;
            while (k < na && k < nbp && memcmp(pa + k, pb + k, sizeof *pa) == 0)
                k++;
            GR_FAIL("rank %d: stopped after %ld steps, saved, resumed and run to %ld, the parameters differ from the "
                    "run that never stopped (first at [%zu]: %.9g vs %.9g): something the next step depends on was "
                    "not saved or not restored",
                    r, stop, steps, k, k < na ? (double)pa[k] : 0.0, k < nbp ? (double)pb[k] : 0.0);
        }
        free(pa), free(pb);
    }
}
END_TEST
