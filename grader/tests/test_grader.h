/* test_grader.h — the grader's unit tests (build/tests/grader): each file
 * but test_plan.c (which holds main) gives its test case here. */
#ifndef GRADER_TEST_GRADER_H
#define GRADER_TEST_GRADER_H

#include <check.h> // TCase

/* test_not_built.c: what a submission that did not build is told. */
TCase *not_built_tcase(void);

#endif /* GRADER_TEST_GRADER_H */
