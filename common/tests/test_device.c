/* test_device.c — device specs, opening, and the CPU device's memory, streams and events. */
#include "tests.h"

#include <math.h> // isfinite
#include <stdio.h> // snprintf
#include <stdlib.h> // free

#include "dl/device.h" // dl_device_*, dl_malloc, dl_memcpy_*, dl_event_*

START_TEST(parse_specs)
{
    env_saved e = env_set("DL_DEVICE", "cuda:2"); // never read by the parser
    dl_device_spec d = {DL_DEVICE_CUDA, -1, -1, -1};
    ck_assert_st(dl_device_parse("auto", &d), DL_OK);
    ck_assert(d.kind == DL_DEVICE_CPU && d.is_auto == 1 && d.ordinal == 0 && d.any_gpu == 0);
    ck_assert_st(dl_device_parse("cpu", &d), DL_OK);
    ck_assert(d.kind == DL_DEVICE_CPU && d.is_auto == 0 && d.ordinal == 0 && d.any_gpu == 0);
    ck_assert_st(dl_device_parse("cuda", &d), DL_OK);
    ck_assert(d.kind == DL_DEVICE_CUDA && d.is_auto == 0 && d.ordinal == 0 && d.any_gpu == 1);
    ck_assert_st(dl_device_parse("cuda:3", &d), DL_OK);
    ck_assert(d.kind == DL_DEVICE_CUDA && d.ordinal == 3 && d.any_gpu == 0);
    ck_assert_st(dl_device_parse("cuda:0", &d), DL_OK); // GPU 0 as asked, not "any"
    ck_assert(d.kind == DL_DEVICE_CUDA && d.ordinal == 0 && d.any_gpu == 0);
    ck_assert_st(dl_device_parse(NULL, &d), DL_OK);
    ck_assert_int_eq(d.is_auto, 1);
    ck_assert_st(dl_device_parse("", &d), DL_OK);
    ck_assert_int_eq(d.is_auto, 1);
    const char *bad[] = {"gpu", "CPU", "cudax", "cuda:", "cuda:x", "cuda:-1", "cuda:1x", " cpu"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dl_device_spec before = d;
        ck_assert_st(dl_device_parse(bad[i], &d), DL_ERR_ARG);
        ck_assert(d.kind == before.kind && d.is_auto == before.is_auto); // untouched on failure
        char quoted[32];
        snprintf(quoted, sizeof quoted, "'%s'", bad[i]);
        ck_assert_has(dl_last_error(), quoted);
    }
    env_restore(&e);
}
END_TEST

START_TEST(env_var_is_the_default)
{
    env_saved e = env_set("DL_DEVICE", "cuda:2");
    ck_assert_str_eq(dl_device_env(), "cuda:2"); // the one place DL_DEVICE is read
    setenv("DL_DEVICE", "", 1);
    ck_assert_str_eq(dl_device_env(), "auto");
    unsetenv("DL_DEVICE");
    ck_assert_str_eq(dl_device_env(), "auto");
    setenv("DL_DEVICE", "cpu", 1);
    dl_device dev;
    ck_assert_st(dl_device_open(NULL, &dev), DL_OK); // NULL: DL_DEVICE
    ck_assert_int_eq(dev.kind, DL_DEVICE_CPU);
    dl_device_close(&dev);
    setenv("DL_DEVICE", "tpu", 1);
    ck_assert_st(dl_device_open("", &dev), DL_ERR_ARG);
    ck_assert_has(dl_last_error(), "'tpu'");
    ck_assert_st(dl_device_open("cpu", &dev), DL_OK); // an explicit spec wins
    dl_device_close(&dev);
    env_restore(&e);
}
END_TEST

START_TEST(open_cpu)
{
    dl_device dev;
    ck_assert_st(dl_device_open("cpu", &dev), DL_OK);
    ck_assert_int_eq(dev.kind, DL_DEVICE_CPU);
    ck_assert_int_eq(dev.ordinal, 0);
    ck_assert_ptr_null(dev.stream);
    ck_assert_ptr_null(dev.blas);
    ck_assert_str_eq(dev.name, "cpu");
    ck_assert_str_eq(dl_device_describe(&dev), "cpu");
    ck_assert_st(dl_device_sync(&dev), DL_OK);
    dl_device_close(&dev);
    const dl_device *cpu = dl_cpu();
    ck_assert_ptr_eq(cpu, dl_cpu());
    ck_assert_int_eq(cpu->kind, DL_DEVICE_CPU);
    ck_assert_str_eq(cpu->name, "cpu");
    ck_assert_str_eq(dl_device_describe(cpu), "cpu");
    ck_assert_str_eq(dl_device_kind_name(cpu), "cpu");
    ck_assert_int_eq(dl_device_is_gpu(cpu), 0);
}
END_TEST

START_TEST(open_cuda_without_gpu)
{
    dl_device dev;
    if (dl_built_with_cuda() && dl_cuda_device_count() > 0) {
        // A GPU machine: cuda opens, and an ordinal past the last GPU does not.
        ck_assert_st(dl_device_open("cuda", &dev), DL_OK);
        ck_assert_int_eq(dev.kind, DL_DEVICE_CUDA);
        ck_assert_has(dl_device_describe(&dev), "cuda:0 (");
        dl_device_close(&dev);
        ck_assert_st(dl_device_open("cuda:1023", &dev), DL_ERR_NO_DEVICE);
        ck_assert_has(dl_last_error(), "--device cuda:1023");
        return;
    }
    ck_assert_int_eq(dl_cuda_device_count(), 0);
    dl_status st = dl_device_open("cuda", &dev);
    ck_assert_msg(st == (dl_built_with_cuda() ? DL_ERR_NO_DEVICE : DL_ERR_NO_CUDA), "got %s: %s", dl_status_name(st),
                  dl_last_error());
    ck_assert_has(dl_last_error(), "--device cpu");
    ck_assert_int_eq(dl_exit_code(st), 2);
    st = dl_device_open("cuda:1", &dev);
    ck_assert(st == DL_ERR_NO_DEVICE || st == DL_ERR_NO_CUDA);
    // auto falls back to the CPU.
    ck_assert_st(dl_device_open("auto", &dev), DL_OK);
    ck_assert_int_eq(dev.kind, DL_DEVICE_CPU);
    dl_device_close(&dev);
}
END_TEST

#ifdef DL_HAVE_CUDA
const char *dl_cublas_error_string(int st); /* dl/cuda_check.h's, without cuBLAS's headers (st: a cublasStatus_t) */
#endif

/* 1 when this process has the library path mapped (/proc/self/maps). */
static int mapped(const char *path_part)
{
    char *maps = slurp("/proc/self/maps", NULL);
    int yes = maps != NULL && strstr(maps, path_part) != NULL;
    free(maps);
    return yes;
}

/* The emulated CUDA device (make EMU=1): "emu" opens it there, and only
 * there; a normal build refuses it with the flags, saying how to get it. */
START_TEST(emu_device)
{
    dl_device_spec d;
    dl_device dev;
    if (!dl_built_with_emu()) {
        ck_assert_int_eq(dl_emu_device_count(), 0);
        ck_assert_st(dl_device_parse("emu", &d), DL_ERR_ARG);
        ck_assert_has(dl_last_error(), "'emu'");
        ck_assert_has(dl_last_error(), "make EMU=1");
        ck_assert_int_eq(dl_exit_code(DL_ERR_ARG), 2);
        ck_assert_st(dl_device_parse("emu:1", &d), DL_ERR_ARG);
        return;
    }
    ck_assert_st(dl_device_parse("emu", &d), DL_OK);
    ck_assert(d.kind == DL_DEVICE_CUDA && d.emu == 1 && d.any_gpu == 1 && d.ordinal == 0);
    ck_assert_st(dl_device_parse("emu:2", &d), DL_OK);
    ck_assert(d.emu == 1 && d.any_gpu == 0 && d.ordinal == 2);
    ck_assert_st(dl_device_parse("emu:x", &d), DL_ERR_ARG);
    ck_assert_int_eq(dl_cuda_device_count(), 0); // the emulated build has no GPU
    ck_assert_int_ge(dl_emu_device_count(), 1);
    ck_assert_st(dl_device_open("emu", &dev), DL_OK);
    ck_assert(dev.kind == DL_DEVICE_CUDA && dev.emulated == 1 && !dl_device_is_gpu(&dev));
    ck_assert_has(dl_device_describe(&dev), "emu:0 (emulated CUDA");
    ck_assert_str_eq(dl_device_kind_name(&dev), "emu");
    dl_device_close(&dev);
    ck_assert_st(dl_device_open("emu:63", &dev), DL_ERR_NO_DEVICE);
    ck_assert_has(dl_last_error(), "DL_EMU_DEVICES");
    ck_assert_st(dl_device_open("auto", &dev), DL_OK); // never the emulator by surprise
    ck_assert_int_eq(dev.kind, DL_DEVICE_CPU);
    dl_device_close(&dev);
}
END_TEST

START_TEST(cublas_on_first_use)
{
#if defined(DL_HAVE_CUDA) && !defined(DL_CUDA_EMU) // (the emulated device's cuBLAS is the emulator's)
    // the kit's cuBLAS calls open the library the first time one runs, not before
    if (dl_cuda_device_count() == 0)
        ck_assert_msg(!mapped("libcublas"), "cuBLAS was loaded before any of its functions was called");
    // cuBLAS's own words (its versions word them differently), not the kit's for a library it could not open
    const char *ok = dl_cublas_error_string(0), *not_init = dl_cublas_error_string(1);
    ck_assert_str_ne(ok, "cuBLAS could not be loaded");
    ck_assert_str_ne(ok, not_init);
    ck_assert(mapped("libcublas"));
#else
    ck_assert(!mapped("libcublas"));
#endif
}
END_TEST

START_TEST(versions)
{
    ck_assert_int_gt((int)strlen(dl_cuda_runtime_version()), 0);
    ck_assert_int_gt((int)strlen(dl_cuda_driver_version()), 0);
    ck_assert_int_gt((int)strlen(dl_nccl_version()), 0);
    if (!dl_built_with_cuda()) {
        ck_assert_str_eq(dl_cuda_runtime_version(), "none");
        ck_assert_str_eq(dl_nccl_version(), "none");
    }
}
END_TEST

START_TEST(cpu_memory)
{
    const dl_device *cpu = dl_cpu();
    void *p = (void *)1, *q = NULL, *z = NULL;
    ck_assert_st(dl_malloc(cpu, &p, 64), DL_OK);
    ck_assert_ptr_nonnull(p);
    ck_assert_st(dl_malloc(cpu, &q, 64), DL_OK);
    ck_assert_st(dl_malloc(cpu, &z, 0), DL_OK);
    ck_assert_ptr_nonnull(z);
    unsigned char src[64], back[64];
    for (int i = 0; i < 64; i++)
        src[i] = (unsigned char)(3 * i + 1);
    ck_assert_st(dl_memcpy_h2d(cpu, p, src, 64), DL_OK);
    ck_assert_st(dl_memcpy_d2d(cpu, q, p, 64), DL_OK);
    memset(back, 0, sizeof back);
    ck_assert_st(dl_memcpy_d2h(cpu, back, q, 64), DL_OK);
    ck_assert_mem_eq(back, src, 64);
    // Overlapping device-to-device copies behave like memmove.
    ck_assert_st(dl_memcpy_d2d(cpu, (unsigned char *)p + 1, p, 32), DL_OK);
    ck_assert_uint_eq(((unsigned char *)p)[1], src[0]);
    ck_assert_uint_eq(((unsigned char *)p)[32], src[31]);
    ck_assert_st(dl_memset0(cpu, (unsigned char *)q + 8, 16), DL_OK);
    ck_assert_st(dl_memcpy_d2h(cpu, back, q, 64), DL_OK);
    for (int i = 0; i < 64; i++)
        ck_assert_uint_eq(back[i], (i >= 8 && i < 24) ? 0 : src[i]);
    ck_assert_st(dl_memcpy_h2d(cpu, NULL, src, 4), DL_ERR_ARG);
    ck_assert_st(dl_memcpy_d2h(cpu, back, NULL, 4), DL_ERR_ARG);
    ck_assert_st(dl_memcpy_h2d(cpu, NULL, NULL, 0), DL_OK); // zero bytes: nothing to do
    ck_assert_st(dl_memset0(cpu, NULL, 0), DL_OK);
    dl_free(cpu, p);
    dl_free(cpu, q);
    dl_free(cpu, z);
    dl_free(cpu, NULL);
}
END_TEST

START_TEST(cpu_streams_and_events)
{
    const dl_device *cpu = dl_cpu();
    dl_stream s = (dl_stream)1;
    ck_assert_st(dl_stream_create(cpu, &s), DL_OK);
    ck_assert_ptr_null(s);
    ck_assert_st(dl_stream_sync(cpu, s), DL_OK);
    dl_event a, b;
    ck_assert_st(dl_event_create(cpu, &a), DL_OK);
    ck_assert_st(dl_event_create(cpu, &b), DL_OK);
    ck_assert_ptr_null(a.ev);
    ck_assert_st(dl_event_record(cpu, &a, NULL), DL_OK);
    ck_assert_st(dl_event_record(cpu, &b, s), DL_OK);
    ck_assert_st(dl_stream_wait_event(cpu, s, &a), DL_OK);
    ck_assert_st(dl_event_sync(cpu, &b), DL_OK);
    float ms = -1.0f;
    dl_status est = dl_event_elapsed_ms(cpu, &a, &b, &ms);
    ck_assert_st(est, DL_OK);
    ck_assert(isfinite(ms) && ms >= 0.0f); // the host clock is monotonic
    // Elapsed time is the difference of the recorded host times.
    a.t_host = 1.0;
    b.t_host = 1.25;
    est = dl_event_elapsed_ms(cpu, &a, &b, &ms);
    ck_assert_st(est, DL_OK);
    ck_assert_float_eq_tol(ms, 250.0f, 1e-3f);
    dl_event_destroy(cpu, &a);
    dl_event_destroy(cpu, &b);
    dl_stream_destroy(cpu, s);
}
END_TEST

Suite *device_suite(void)
{
    return suite_of("device", tcase_with_timeout("device", 30),
                    TESTS(parse_specs, env_var_is_the_default, open_cpu, open_cuda_without_gpu, emu_device,
                          cublas_on_first_use, versions, cpu_memory, cpu_streams_and_events));
}
