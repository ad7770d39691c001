/* emu_test.h — the emulated CUDA device's unit tests (common/emu/tests): the
 * check macro, the helpers and the list of tests. A test returns 0 when it
 * passes; CHECK prints where and why it failed and returns 1. Each test
 * starts on a reset device with no checks and no findings (test_main.cc). */
#ifndef EMU_TEST_H
#define EMU_TEST_H

#include <cuda_runtime.h> // the emulated runtime
#include <stdio.h> // fprintf

#define CHECK(cond, ...)                                                         \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "  %s:%d: failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                        \
            fputc('\n', stderr);                                                 \
            return 1;                                                            \
        }                                                                        \
    } while (0)

#define CHECK_CUDA(call)                                        \
    do {                                                        \
        cudaError_t e_ = (call);                                \
        CHECK(e_ == cudaSuccess, "%s", cudaGetErrorString(e_)); \
    } while (0)

/* 1 when a finding of kind was recorded whose text holds each non-NULL needle. */
int has_finding(emu_kind kind, const char *needle1, const char *needle2);
/* The findings so far, printed (for a failed check's context). */
void print_findings(void);
/* Runs this program with --child name; its stderr into out; returns its wait status. */
int run_child(const char *name, char *out, size_t len);

// ---- the tests (kernels.cu, checks.cu, runtime.cu, libs.cu, half.cc) ----
#define EMU_TESTS(X)           \
    X(barrier)                 \
    X(shared_static)           \
    X(shared_dynamic)          \
    X(shuffles_votes)          \
    X(atomics)                 \
    X(launch_rewrite)          \
    X(half_to_float_all)       \
    X(float_to_half_rne)       \
    X(bf16_rne)                \
    X(half_arithmetic)         \
    X(race_detected)           \
    X(missing_syncthreads)     \
    X(missing_syncwarp)        \
    X(divergent_syncthreads)   \
    X(early_return_barrier)    \
    X(divergent_shuffle)       \
    X(oob_global_read)         \
    X(oob_shared_read)         \
    X(oob_global_write_before) \
    X(oob_shared_write)        \
    X(block_order_sum)         \
    X(correct_reduction)       \
    X(host_pointer_arg)        \
    X(wrong_direction_copy)    \
    X(copy_past_end)           \
    X(unimplemented_calls)     \
    X(bad_launch_config)       \
    X(streams_lazy)            \
    X(streams_events)          \
    X(sticky_error)            \
    X(cublas_gemm)             \
    X(cublas_checks)           \
    X(nccl_one_rank)           \
    X(nccl_two_ranks)

#define EMU_DECLARE(name) int test_##name(void);
EMU_TESTS(EMU_DECLARE)
#undef EMU_DECLARE

/* What a child process runs (--child name): it faults, on purpose. */
void child_oob_global_read(void);
void child_oob_shared_read(void);
void child_oob_global_write_before(void);
void child_oob_shared_write(void);

#endif /* EMU_TEST_H */
