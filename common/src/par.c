/* par.c — a small pool of sleeping helper threads for element-wise loops
 * (dl/par.h). One job at a time: the caller publishes (fn, ctx, pieces) under
 * the lock, bumps the generation and wakes the helpers; helper k runs piece k
 * and counts down; the caller runs piece 0 and waits for the count. */
#define _GNU_SOURCE
#include "dl/par.h"

#include <pthread.h> // pthread_create, pthread_mutex_*, pthread_cond_*

#include "dl/blas.h" // dl_blas_threads

static struct {
    pthread_mutex_t lock; // guards everything below
    pthread_cond_t go, done;
    pthread_mutex_t call; // one dl_par_for at a time
    int started; // helpers running (threads 1..started)
    unsigned long gen; // bumped once per job
    int pieces, pending;
    dl_par_fn fn;
    void *ctx;
    size_t n;
} P = {PTHREAD_MUTEX_INITIALIZER,
       PTHREAD_COND_INITIALIZER,
       PTHREAD_COND_INITIALIZER,
       PTHREAD_MUTEX_INITIALIZER,
       0,
       0,
       0,
       0,
       NULL,
       NULL,
       0};

static void piece(int k, int pieces, size_t n, size_t *lo, size_t *hi)
{
    *lo = n * (size_t)k / (size_t)pieces;
    *hi = n * (size_t)(k + 1) / (size_t)pieces;
}

static unsigned long first_gen[DL_PAR_MAX]; // the generation before a helper's first job

static void *helper(void *arg)
{
    int me = (int)(size_t)arg;
    pthread_mutex_lock(&P.lock);
    // not P.gen now: the job it was started for may have been published already
    unsigned long seen = first_gen[me];
    for (;;) {
        while (P.gen == seen)
            pthread_cond_wait(&P.go, &P.lock);
        seen = P.gen;
        if (me >= P.pieces)
            continue; // this job has fewer pieces than helpers
        dl_par_fn fn = P.fn;
        void *ctx = P.ctx;
        size_t lo, hi;
        piece(me, P.pieces, P.n, &lo, &hi);
        pthread_mutex_unlock(&P.lock);
        fn(ctx, lo, hi);
        pthread_mutex_lock(&P.lock);
        if (--P.pending == 0)
            pthread_cond_signal(&P.done);
    }
    return NULL;
}

int dl_par_threads(void)
{
    int t = dl_blas_threads();
    return t < 1 ? 1 : t > DL_PAR_MAX ? DL_PAR_MAX : t;
}

// fork: no job runs across it (prepare takes the call lock), and the child,
// which inherits none of the helpers, starts its own on its first job
static void before_fork(void)
{
    pthread_mutex_lock(&P.call);
}

static void after_fork_parent(void)
{
    pthread_mutex_unlock(&P.call);
}

static void after_fork_child(void)
{
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t c = PTHREAD_COND_INITIALIZER;
    P.lock = m;
    P.go = c;
    P.done = c;
    P.started = 0;
    pthread_mutex_unlock(&P.call);
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void register_atfork(void)
{
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

/* Helpers 1..want-1 running in this process; returns how many pieces can run. */
static int ensure_helpers(int want)
{
    pthread_once(&atfork_once, register_atfork);
    while (P.started + 1 < want) {
        pthread_t t;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        first_gen[P.started + 1] = P.gen; // P.gen changes only under P.call, which the caller holds
        int rc = pthread_create(&t, &a, helper, (void *)(size_t)(P.started + 1));
        pthread_attr_destroy(&a);
        if (rc != 0)
            break;
        P.started++;
    }
    return P.started + 1 < want ? P.started + 1 : want;
}

void dl_par_for(size_t n, size_t grain, dl_par_fn fn, void *ctx)
{
    if (n == 0)
        return;
    size_t g = grain > 0 ? grain : 1;
    int threads = dl_par_threads();
    size_t most = n / g; // pieces of at least grain elements
    int pieces = most < (size_t)threads ? (int)most : threads;
    if (pieces < 2) {
        fn(ctx, 0, n);
        return;
    }
    pthread_mutex_lock(&P.call);
    pieces = ensure_helpers(pieces);
    if (pieces < 2) {
        pthread_mutex_unlock(&P.call);
        fn(ctx, 0, n);
        return;
    }
    pthread_mutex_lock(&P.lock);
    P.fn = fn;
    P.ctx = ctx;
    P.n = n;
    P.pieces = pieces;
    P.pending = pieces - 1;
    P.gen++;
    pthread_cond_broadcast(&P.go);
    pthread_mutex_unlock(&P.lock);
    size_t lo, hi;
    piece(0, pieces, n, &lo, &hi);
    fn(ctx, lo, hi);
    pthread_mutex_lock(&P.lock);
    while (P.pending > 0)
        pthread_cond_wait(&P.done, &P.lock);
    pthread_mutex_unlock(&P.lock);
    pthread_mutex_unlock(&P.call);
}
