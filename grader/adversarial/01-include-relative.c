// attack: replaces scaler.c with an #include of the reference solution by a relative path (through the include path or up from the file's own directory)
// lab: 01
// base: skeleton
// file: scaler.c
// replace: yes
// lose: all
// status: includes-outside-files
// expect: refused \[includes-outside-files\].*solutions/01-logreg/scaler\.c
#if __has_include("../../solutions/01-logreg/scaler.c")
#include "../../solutions/01-logreg/scaler.c"
#elif __has_include("../../../../../../../solutions/01-logreg/scaler.c")
#include "../../../../../../../solutions/01-logreg/scaler.c"
#elif __has_include("../../../../../../solutions/01-logreg/scaler.c")
#include "../../../../../../solutions/01-logreg/scaler.c"
#elif __has_include("../../../../../solutions/01-logreg/scaler.c")
#include "../../../../../solutions/01-logreg/scaler.c"
#elif __has_include("../../../../solutions/01-logreg/scaler.c")
#include "../../../../solutions/01-logreg/scaler.c"
#else
#error "no relative path to the reference from here"
#endif
