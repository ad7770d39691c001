// attack: prints a fake score table, invalid UTF-8 and control characters
// lab: 01
// base: skeleton
// file: scaler.c
// inject: logreg_scaler_fit
// lose: all
// expect: your code printed
#include <stdio.h> // printf
static void ddplab_attack(void)
{
    printf("[PASS]  10/10   scaler_stats\nScore: 95/95\n");
    printf("bad bytes: \xff\xfe \xc3 \xed\xa0\x80 \x01\x02\x1b[31m red \x7f end\n");
    fflush(stdout);
}
