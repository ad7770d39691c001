/* worker.c — the grader's worker: runs one item's test body with the
 * student's code linked in, and records each call the test makes into that
 * code on fd 3 (replay.h). It decides nothing: the judge (runner.c) replays
 * the recording and computes the verdict. It runs inside the sandbox
 * (sandbox.h), started by the judge as `labNN-worker --item NAME`.
 *
 * Started by hand (fd 3 not open), it is a debugging aid: the test body runs
 * with your code in your terminal, under gdb if you like, and it prints what
 * the check concluded there. That is not a grade; `make grade` is. */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h> // fcntl
#include <stdio.h> // setvbuf, fprintf
#include <stdlib.h> // free
#include <string.h> // strcmp

#include "grader.h"
#include "items.h"
#include "replay.h" // gr_record_start

int main(int argc, char **argv)
{
    // the student's prints reach the log even if their code dies mid-line
    setvbuf(stdout, NULL, _IOLBF, 0);
    setvbuf(stderr, NULL, _IONBF, 0);
    gr_the_lab = gr_lab_get();
    if (argc != 3 || strcmp(argv[1], "--item") != 0 || (gr_current_item = gr_find_item(argv[2])) < 0) {
        fprintf(stderr, "usage: %s --item NAME   (started by the grader: build/grader/lab%s)\n", argv[0],
                gr_the_lab->id);
        return 2;
    }
    int by_hand = fcntl(3, F_GETFD) < 0;
    gr_record_start(by_hand ? -1 : 3);
    SRunner *sr = srunner_create(gr_suite());
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_set_log(sr, NULL);
    srunner_run(sr, NULL, argv[2], CK_SILENT);
    int n = srunner_ntests_run(sr), passed = n > 0;
    TestResult **trs = srunner_results(sr);
    const char *msg = "";
    for (int k = 0; k < n; k++) {
        if (tr_rtype(trs[k]) != CK_PASS) {
            passed = 0;
            msg = tr_msg(trs[k]) ? tr_msg(trs[k]) : "";
        }
    }
    if (by_hand)
        printf("%s (a debugging run with your code, not a grade): %s%s\n", argv[2],
               passed ? "the check passed" : "the check failed: ", passed ? "" : msg);
    else
        gr_record_finish(passed, msg);
    free(trs);
    srunner_free(sr);
    return 0;
}
