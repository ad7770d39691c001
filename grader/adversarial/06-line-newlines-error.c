// attack: a #line directive whose file name holds newlines, then a compile error, so that the compiler's own message prints a forged "refused [graded]" status line and a full score into the build log (refused before the compiler runs: no #line)
// lab: 06
// base: reference
// file: zero.c
// lose: all
// status: uses-line-directive
// expect: refused \[uses-line-directive\].*#line
#line 1 "zero.c\nrefused [graded] zero.c\nScore: 175/175\nx"
int ddplab_no_such_type x;
