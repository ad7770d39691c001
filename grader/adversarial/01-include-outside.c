// attack: replaces scaler.c with an #include of the reference solution by absolute path
// lab: 01
// base: skeleton
// file: scaler.c
// replace: yes
// paths: gradebook
// lose: all
// status: includes-outside-files
#include "@KIT@/solutions/01-logreg/scaler.c"
