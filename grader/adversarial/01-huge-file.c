// attack: writes a 4 GiB file
// env: CHECK_SUB_LIFT=references-outside-api,static-over-cap
// lab: 01
// base: skeleton
// file: scaler.c
// inject: logreg_scaler_fit
// lose: all
// expect: file size limit
#include <stdio.h> // fopen, fwrite
static void ddplab_attack(void)
{
    static char block[1 << 20];
    FILE *f = fopen("big.bin", "w");
    for (int k = 0; f != NULL && k < 4096; k++)
        fwrite(block, 1, sizeof block, f);
}
