/* test_main.cc — runs the emulated CUDA device's unit tests: all, or those
 * named on the command line; `--child NAME` runs a case that must fault (a
 * test runs it in a process of its own). Prints one line per test and a
 * tally; exits 1 when any failed. */
#include <stdlib.h> // exit
#include <string.h> // strcmp, strstr
#include <sys/wait.h> // waitpid
#include <time.h> // clock_gettime
#include <unistd.h> // fork, pipe, execl

#include "emu_test.h"

int has_finding(emu_kind kind, const char *a, const char *b)
{
    emu_finding f;
    for (int i = 0; emu_finding_get(i, &f) == 0; i++)
        if (f.kind == kind && (a == NULL || strstr(f.text, a)) && (b == NULL || strstr(f.text, b)))
            return 1;
    return 0;
}

void print_findings(void)
{
    emu_finding f;
    for (int i = 0; emu_finding_get(i, &f) == 0; i++)
        fprintf(stderr, "    finding %d (%s): %s\n", i, emu_kind_name(f.kind), f.text);
}

int run_child(const char *name, char *out, size_t len)
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 2);
        close(fd[0]);
        execl("/proc/self/exe", "emu_test", "--child", name, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    size_t n = 0;
    ssize_t got;
    while (n + 1 < len && (got = read(fd[0], out + n, len - 1 - n)) > 0)
        n += (size_t)got;
    out[n] = '\0';
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
}

typedef struct test {
    const char *name;
    int (*fn)(void);
} test;

#define EMU_ROW(name) {#name, test_##name},
static const test tests[] = {EMU_TESTS(EMU_ROW)};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--child")) {
        static const struct {
            const char *name;
            void (*fn)(void);
        } children[] = {{"oob_global_read", child_oob_global_read},
                        {"oob_shared_read", child_oob_shared_read},
                        {"oob_global_write_before", child_oob_global_write_before},
                        {"oob_shared_write", child_oob_shared_write}};
        for (const auto &c : children)
            if (!strcmp(argv[2], c.name))
                c.fn();
        return 3; // the faults end the process before; the guards' findings were printed
    }
    int failed = 0, run = 0;
    double t0 = now();
    emu_set_quiet(1); // findings are checked, not printed
    for (const test &t : tests) {
        int wanted = argc == 1;
        for (int i = 1; i < argc; i++)
            wanted |= !strcmp(argv[i], t.name);
        if (!wanted)
            continue;
        cudaDeviceReset();
        emu_findings_clear();
        emu_check_set(0);
        double t1 = now();
        int bad = t.fn();
        if (bad)
            print_findings();
        printf("%s %-24s %6.3f s\n", bad ? "FAIL" : "ok  ", t.name, now() - t1);
        fflush(stdout);
        failed += bad != 0;
        run++;
    }
    if (run == 0) {
        fprintf(stderr, "emu_test: no test named so (the tests: see emu_test.h)\n");
        return 2;
    }
    printf("emu_test: %d tests, %d failed, %.2f s, %d worker threads\n", run, failed, now() - t0, emu_workers());
    return failed ? 1 : 0;
}
