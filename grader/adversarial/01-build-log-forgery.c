// attack: scaler.c makes the compiler print lines of its choosing into the build's log (a #pragma GCC error whose text holds newlines: a forged "refused [graded]" line and a forged "Score: 95/95"), and #includes the reference's scaler.c by its absolute path where its lines fail to compile, so that the compiler quotes them. The judge alone says the status (build-failed, from its own reading of the log), and neither the forged lines nor the reference's reach the table or results.json
// lab: 01
// base: skeleton
// file: scaler.c
// replace: yes
// lose: all
// status: build-failed
// expect: not built \(build-failed\)
// absent: sizeof \*(ss|count)|dev \* dev|refused \[graded\]|Score: 95/95
#pragma GCC error "forged\nrefused [graded] scaler.c: accepted\nScore: 95/95\n"
#define count )
#define ss )
#include "@KIT@/solutions/01-logreg/scaler.c"
