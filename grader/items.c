/* items.c — the item table's plumbing, shared by the judge (runner.c) and the
 * worker (worker.c): finding items, building the suite from them, the
 * scratch directory and the timeout multiplier. See grader.h. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h> // getenv, atof
#include <string.h> // strcmp

#include "grader.h"
#include "items.h"

const gr_lab *gr_the_lab;
int gr_current_item = -1;
char gr_scratch_dir[512] = ".";
char gr_code_dir[1024] = ".";
void (*gr_setup_hook)(void);
void (*gr_teardown_hook)(void);

const char *gr_scratch(void)
{
    return gr_scratch_dir;
}

const gr_item *gr_current(void)
{
    return gr_current_item >= 0 ? &gr_the_lab->items[gr_current_item] : NULL;
}

int gr_find_item(const char *name)
{
    for (int i = 0; i < gr_the_lab->n_items; i++) {
        if (strcmp(gr_the_lab->items[i].name, name) == 0)
            return i;
    }
    return -1;
}

double gr_timeout_multiplier(void)
{
    const char *env = getenv("CK_TIMEOUT_MULTIPLIER");
    double m = env != NULL ? atof(env) : 1.0;
    return m > 0 ? m : 1.0;
}

static void setup(void)
{
    if (gr_setup_hook != NULL)
        gr_setup_hook();
}

static void teardown(void)
{
    if (gr_teardown_hook != NULL)
        gr_teardown_hook();
}

Suite *gr_suite(void)
{
    Suite *s = suite_create(gr_the_lab->id);
    for (int i = 0; i < gr_the_lab->n_items; i++) {
        const gr_item *it = &gr_the_lab->items[i];
        TCase *tc = tcase_create(it->name);
        tcase_set_timeout(tc, it->timeout);
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, *it->test);
        suite_add_tcase(s, tc);
    }
    return s;
}
