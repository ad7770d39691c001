/* placement.c — where the ranks are: the device each rank claims, agreed by
 * every rank before any opens one (dl_comm_claim_device; the claims'
 * exchange and their one verdict: place_claims, dl_comm_check_claims).
 * The launcher that started the ranks is launch.c's; comm.c routes the
 * operations, and this file decides nothing about them. */
#define _POSIX_C_SOURCE 200809L
#include "dl/comm.h"

#include <stdint.h> // int32_t
#include <stdio.h> // snprintf
#include <stdlib.h> // getenv, malloc, atoi
#include <string.h> // memcpy, memset, strncmp
#include <unistd.h> // gethostname

#include "comm_backend.h" // dl_comm_args, dl_mpi_start_, dl_mpi_wait_
#include "comm_impl.h" // struct dl_comm, dl_comm_claimed_
#include "dl/device.h" // dl_device_kind, dl_cuda_device_count, dl_built_with_emu, dl_emu_device_count
#include "dl/status.h" // dl_error_set, dl_last_error, dl_error_clear

// ---- one GPU per rank: the claims, their verdict, their exchange ----

/* Two claims made on the same host. */
static int same_host(const dl_comm_claim *a, const dl_comm_claim *b)
{
    return strncmp(a->host, b->host, sizeof a->host) == 0;
}

/* Ranks on w[r]'s host, all of them asking for a GPU (the kinds agree by then). */
static int ranks_on_host(const dl_comm_claim *w, int n, int r)
{
    int k = 0;
    for (int q = 0; q < n; q++)
        k += same_host(&w[q], &w[r]);
    return k;
}

/* What to do about two ranks on one GPU of a host with w->gpus GPUs (or emulated
 * ordinals) and ranks ranks asking for one. */
static const char *one_per_rank_advice(const dl_comm_claim *w, int ranks, char *buf, size_t len)
{
    if (w->emulated)
        snprintf(buf, len,
                 "NCCL needs one GPU per rank, and the emulated device holds ranks to it: DL_EMU_DEVICES=N gives it "
                 "N ordinals (DL_EMU_DEVICES=%d for the %d ranks on this machine) with --device emu (one ordinal "
                 "per local rank), or use --device cpu",
                 ranks, ranks);
    else
        snprintf(buf, len,
                 "NCCL needs one GPU per rank (it would stop with \"Duplicate GPU detected\"): start at most %d "
                 "rank(s) per machine (dlrun -n %d) with --device cuda (one GPU per local rank), or use --device cpu",
                 w->gpus, w->gpus);
    return buf;
}

/* How a claim names its device: "cuda" or "emu" (an ordinal follows), "GPU" or "emulated GPU". */
static const char *spec_name(const dl_comm_claim *w)
{
    return w->emulated ? "emu" : "cuda";
}

static const char *gpu_name(const dl_comm_claim *w)
{
    return w->emulated ? "emulated GPU" : "GPU";
}

dl_status dl_comm_check_claims(const dl_comm_claim *w, int n)
{
    char advice[256];
    int gpu = -1, cpu = -1; // the first rank on a GPU, on the CPU
    for (int r = 0; r < n; r++) {
        if (w[r].ordinal >= 0 && gpu < 0)
            gpu = r;
        if (w[r].ordinal < 0 && cpu < 0)
            cpu = r;
    }
    if (gpu < 0)
        return DL_OK;
    if (cpu >= 0)
        return dl_error_set(DL_ERR_ARG,
                            "rank %d uses %s:%d but rank %d the CPU: with NCCL every rank needs a GPU of its own; "
                            "give every rank the same --device (auto takes the CPU on a machine with fewer GPUs "
                            "than ranks)",
                            gpu, spec_name(&w[gpu]), w[gpu].ordinal, cpu);
    for (int i = 0; i < n; i++) {
        for (int j = i + 1; j < n; j++) {
            if (same_host(&w[i], &w[j]) && w[i].ordinal == w[j].ordinal && w[i].ordinal < w[i].gpus)
                return dl_error_set(DL_ERR_ARG, "ranks %d and %d both use %s %d on host %.64s: %s", i, j,
                                    gpu_name(&w[i]), w[i].ordinal, w[i].host,
                                    one_per_rank_advice(&w[i], ranks_on_host(w, n, i), advice, sizeof advice));
        }
    }
    for (int r = 0; r < n; r++) {
        if (w[r].ordinal < w[r].gpus)
            continue;
        if (w[r].gpus < 0)
            return dl_error_set(DL_ERR_NO_CUDA,
                                "rank %d asks for cuda:%d on host %.64s, but this build has no CUDA (nvcc was not "
                                "found when it was built); use --device cpu",
                                r, w[r].ordinal, w[r].host);
        if (w[r].gpus == 0 && w[r].emulated)
            return dl_error_set(DL_ERR_NO_DEVICE,
                                "rank %d asks for emu:%d, but the emulated device has no ordinal on host %.64s (%.96s)",
                                r, w[r].ordinal, w[r].host, w[r].why);
        if (w[r].gpus == 0)
            return dl_error_set(DL_ERR_NO_DEVICE,
                                "rank %d asks for cuda:%d, but no CUDA GPU answers on host %.64s%s%.96s%s; use "
                                "--device cpu or auto",
                                r, w[r].ordinal, w[r].host, w[r].why[0] ? " (" : "", w[r].why, w[r].why[0] ? ")" : "");
        int k = ranks_on_host(w, n, r);
        if (k <= w[r].gpus && w[r].emulated)
            return dl_error_set(DL_ERR_NO_DEVICE,
                                "rank %d asks for emu:%d, but the emulated device has %d ordinal(s) on host %.64s "
                                "(0..%d; DL_EMU_DEVICES=N gives it N)",
                                r, w[r].ordinal, w[r].gpus, w[r].host, w[r].gpus - 1);
        if (k <= w[r].gpus)
            return dl_error_set(DL_ERR_NO_DEVICE, "rank %d asks for cuda:%d, but host %.64s has %d GPU(s) (0..%d)", r,
                                w[r].ordinal, w[r].host, w[r].gpus, w[r].gpus - 1);
        // more ranks than GPUs here: name a rank this one would share a GPU with,
        // the one on GPU (ordinal mod gpus) if any, else the first other rank
        int g = w[r].ordinal % w[r].gpus, p = -1;
        for (int q = 0; q < n && p < 0; q++) {
            if (q != r && same_host(&w[q], &w[r]) && w[q].ordinal == g)
                p = q;
        }
        for (int q = 0; q < n && p < 0; q++) {
            if (q != r && same_host(&w[q], &w[r]))
                p = q;
        }
        if (p >= 0 && w[p].ordinal < w[p].gpus)
            g = w[p].ordinal;
        return dl_error_set(DL_ERR_ARG,
                            "ranks %d and %d would both use %s %d on host %.64s: it has %d %s(s) for %d ranks "
                            "(rank %d asks for %s:%d, which it lacks). %s",
                            p < r ? p : r, p < r ? r : p, gpu_name(&w[r]), g, w[r].host, w[r].gpus, gpu_name(&w[r]), k,
                            r, spec_name(&w[r]), w[r].ordinal, one_per_rank_advice(&w[r], k, advice, sizeof advice));
    }
    return DL_OK;
}

/* The GPUs this rank sees: dl_cuda_device_count (when none, CUDA's reason in
 * why), the emulated device's ordinals in its build, -1 in a build without
 * CUDA, or DL_TEST_SIMULATED_GPUS where no GPU answers (tests only; see
 * dl/comm.h). */
static int gpus_seen(char *why, size_t len)
{
    dl_error_clear();
    if (dl_built_with_emu()) {
        int e = dl_emu_device_count();
        const char *v = getenv("DL_EMU_DEVICES");
        if (e == 0) // (the emulator's longer words would not fit in a claim)
            snprintf(why, len, "DL_EMU_DEVICES='%.40s' is no count from 1 to 64", v != NULL ? v : "");
        return e;
    }
    int n = dl_built_with_cuda() ? dl_cuda_device_count() : -1;
    if (n == 0)
        snprintf(why, len, "%s", dl_last_error());
    const char *sim = getenv("DL_TEST_SIMULATED_GPUS");
    if (n <= 0 && sim != NULL && atoi(sim) > 0)
        n = atoi(sim);
    return n;
}

/* Every rank's device claim (this one's: kind, ordinal), gathered over mpi
 * (size ranks; uncounted, the bootstrap's) and judged by dl_comm_check_claims
 * on every rank alike: DL_OK, or the one verdict every rank returns. */
static dl_status place_claims(dl_mpi *mpi, int size, dl_device_kind kind, int ordinal)
{
    enum { WORDS = (sizeof(dl_comm_claim) + sizeof(int32_t) - 1) / sizeof(int32_t) };
    union {
        dl_comm_claim claim;
        int32_t words[WORDS];
    } mine;
    memset(&mine, 0, sizeof mine);
    gethostname(mine.claim.host, sizeof mine.claim.host - 1);
    mine.claim.ordinal = kind == DL_DEVICE_CUDA ? ordinal : -1;
    mine.claim.emulated = kind == DL_DEVICE_CUDA && dl_built_with_emu(); // that build's one CUDA device
    if (kind == DL_DEVICE_CUDA) // the CPU does not wake CUDA
        mine.claim.gpus = gpus_seen(mine.claim.why, sizeof mine.claim.why);
    int32_t *all = malloc((size_t)size * sizeof mine);
    dl_comm_claim *claims = malloc((size_t)size * sizeof *claims);
    dl_status st = all != NULL && claims != NULL ? DL_OK : dl_error_set(DL_ERR_NOMEM, "comm: out of memory");
    dl_comm_args a = {.op = DL_OP_ALLGATHER, .send = mine.words, .send_count = WORDS, .recv = all, .t = DL_I32};
    a.recv_count = (size_t)size * WORDS;
    void *req = NULL;
    if (st == DL_OK)
        st = dl_mpi_start_(mpi, &a, &req); // uncounted: the bootstrap's
    if (st == DL_OK)
        st = dl_mpi_wait_(mpi, req, "claim_device");
    for (int r = 0; st == DL_OK && r < size; r++) {
        memcpy(&claims[r], all + (size_t)r * WORDS, sizeof claims[r]);
        claims[r].host[sizeof claims[r].host - 1] = '\0';
        claims[r].why[sizeof claims[r].why - 1] = '\0';
    }
    if (st == DL_OK)
        st = dl_comm_check_claims(claims, size);
    free(all);
    free(claims);
    return st;
}

dl_status dl_comm_claim_device(dl_comm *c, dl_device_kind kind, int ordinal)
{
    c->claimed = 0;
    if (c->backend == BACKEND_SELF)
        return DL_OK; // nothing to share; dl_device_open names what is missing
    DL_TRY(place_claims(c->mpi, c->size, kind, ordinal)); // every rank's claim, one verdict
    c->claimed = 1;
    c->claim_kind = kind;
    c->claim_ordinal = kind == DL_DEVICE_CUDA ? ordinal : 0;
    return DL_OK;
}

int dl_comm_claimed_(const dl_comm *c, const dl_device *dev)
{
    return c->claimed && c->claim_kind == dev->kind &&
           (dev->kind != DL_DEVICE_CUDA || c->claim_ordinal == dev->ordinal);
}
