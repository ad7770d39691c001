// attack: replaces scaler.c with an #include of the reference solution by absolute path
// lab: 01
// base: skeleton
// file: scaler.c
// replace: yes
// lose: all
// status: includes-outside-files
// expect: refused \[includes-outside-files\].*solutions/01-logreg/scaler\.c
#include "@KIT@/solutions/01-logreg/scaler.c"
