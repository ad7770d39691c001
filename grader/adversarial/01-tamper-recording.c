// attack: writes forged records (a passing call) to the grader's recording descriptor at load time
// env: CHECK_SUB_LIFT=references-outside-api,runs-at-load-or-exit
// lab: 01
// base: skeleton
// file: scaler.c
// paths: grade
// lose: all
// expect: diverged|does not match
#include <stdint.h> // uint32_t
#include <string.h> // memcpy
#include <unistd.h> // write
__attribute__((constructor)) static void ddplab_attack(void)
{
    char rec[64];
    uint32_t len = 4 + 17, seq = 1;
    rec[0] = 'C';
    memcpy(rec + 1, &len, 4);
    memcpy(rec + 5, &seq, 4);
    memcpy(rec + 9, "logreg_scaler_fit", 17);
    for (int fd = 3; fd < 10; fd++)
        (void)!write(fd, rec, 5 + len);
    (void)!write(3, "R\x04\x00\x00\x00\x00\x00\x00\x00E\x01\x00\x00\x00P", 15);
}
