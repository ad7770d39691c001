// attack: none: an honest student's debugging lines on stdout and stderr, which GCC compiles into fwrite, puts and putchar; they cost nothing
// lab: 01
// base: reference
// file: scaler.c
// inject: logreg_scaler_fit
// lose: none
#include <stdio.h> // fprintf, fputs, printf
static void ddplab_attack(void)
{
    fprintf(stderr, "scaler: fitting\n"); // a constant: fwrite
    fputs("scaler: still fitting\n", stderr); // fwrite
    printf("scaler: here\n"); // puts
    printf("!"); // putchar
    fprintf(stderr, "%d rows so far\n", 0); // fprintf
    fflush(stdout);
}
