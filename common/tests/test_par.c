/* test_par.c — dl/par.h: every element once, the same bits on any number of
 * threads, small jobs in the caller, helpers again in a forked child. */
#include "tests.h"

#include <stdlib.h> // malloc, free
#include <sys/wait.h> // waitpid
#include <unistd.h> // fork, _exit

#include "dl/blas.h" // dl_blas_set_threads
#include "dl/par.h" // dl_par_for, dl_par_threads

typedef struct job {
    int *hits; // how many times each element was visited
    float *out;
    size_t calls, min_piece;
} job;

static void visit(void *ctx, size_t lo, size_t hi)
{
    job *J = ctx;
    for (size_t k = lo; k < hi; k++) {
        __atomic_add_fetch(&J->hits[k], 1, __ATOMIC_RELAXED);
        J->out[k] = (float)k * 0.5f - 3.0f;
    }
    __atomic_add_fetch(&J->calls, 1, __ATOMIC_RELAXED);
    size_t piece = hi - lo, seen = __atomic_load_n(&J->min_piece, __ATOMIC_RELAXED);
    while (piece < seen &&
           !__atomic_compare_exchange_n(&J->min_piece, &seen, piece, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

/* Runs dl_par_for(n, grain) and checks every element was written once. */
static size_t run(size_t n, size_t grain, size_t *min_piece)
{
    job J = {calloc(n + 1, sizeof(int)), calloc(n + 1, sizeof(float)), 0, (size_t)-1};
    ck_assert_ptr_nonnull(J.hits);
    dl_par_for(n, grain, visit, &J);
    size_t bad = 0; // counted, then asserted once (each ck_assert is a message to Check's parent)
    for (size_t k = 0; k < n; k++)
        bad += J.hits[k] != 1 || J.out[k] != (float)k * 0.5f - 3.0f;
    ck_assert_uint_eq(bad, 0);
    ck_assert_int_eq(J.hits[n], 0);
    free(J.hits);
    free(J.out);
    *min_piece = J.min_piece;
    return J.calls;
}

START_TEST(par_covers_every_element_once)
{
    dl_blas_set_threads(3); // three pieces at most, also on a one-core machine
    ck_assert_int_eq(dl_par_threads(), 3);
    size_t minp;
    ck_assert_uint_eq(run(0, 4, &minp), 0); // nothing to do: no call
    ck_assert_uint_eq(run(7, 4, &minp), 1); // under 2·grain: one call, in the caller
    ck_assert_uint_eq(run(8, 4, &minp), 2);
    ck_assert_uint_ge(minp, 4);
    ck_assert_uint_eq(run(1000003, 1000, &minp), 3);
    ck_assert_uint_ge(minp, 1000);
    for (int rep = 0; rep < 200; rep++) // many jobs back to back: no lost wake-up
        ck_assert_uint_eq(run(30000, 100, &minp), 3);
    dl_blas_set_threads(1);
    ck_assert_uint_eq(run(1000003, 1000, &minp), 1); // one thread: the caller alone
}
END_TEST

START_TEST(par_works_again_in_a_forked_child)
{
    dl_blas_set_threads(2);
    size_t minp;
    ck_assert_uint_eq(run(100000, 100, &minp), 2); // helpers started here
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) { // the child has no helper threads: the pool starts its own
        job J = {calloc(100000, sizeof(int)), calloc(100000, sizeof(float)), 0, (size_t)-1};
        dl_par_for(100000, 100, visit, &J);
        int ok = J.calls == 2;
        for (size_t k = 0; k < 100000; k++)
            ok = ok && J.hits[k] == 1;
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_uint_eq(run(100000, 100, &minp), 2); // and the parent's still answer
}
END_TEST

Suite *par_suite(void)
{
    return suite_of("par", tcase_with_timeout("par", 30),
                    TESTS(par_covers_every_element_once, par_works_again_in_a_forked_child));
}
