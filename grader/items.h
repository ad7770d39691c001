/* items.h — state shared by the judge and the worker (items.c). */
#ifndef GRADER_ITEMS_H
#define GRADER_ITEMS_H

#include "grader.h" // gr_lab

extern const gr_lab *gr_the_lab; /* set from gr_lab_get() by main */
extern int gr_current_item; /* index of the item running, or -1 */
extern char gr_scratch_dir[512];
/* The directory holding the code under test: labNN (the driver) and
 * labNN-worker, built from the same student files. */
extern char gr_code_dir[1024];
/* Run in the judge's test child before and after each test body. */
extern void (*gr_setup_hook)(void);
extern void (*gr_teardown_hook)(void);

int gr_find_item(const char *name);

#endif /* GRADER_ITEMS_H */
