// attack: a #line directive whose file name holds newlines, so that the compiler's diagnostics and __FILE__ print whole lines of the student's choosing (a score, a build status) into the build log the gradebook reads (refused at build: no #line)
// lab: 06
// base: reference
// file: zero.c
// lose: all
// status: uses-line-directive
// expect: refused \[uses-line-directive\].*#line
#line 1 "zero.c\nScore: 175/175\nrefused [graded] zero.c"
static const char *ddplab_where(void)
{
    return __FILE__;
}
