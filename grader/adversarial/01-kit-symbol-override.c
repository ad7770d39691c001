// attack: the reference, plus its own definitions of kit functions (dl_pct, dl_fmt_bytes: every symbol of the library member that holds them, so the linker takes the submission's and never the kit's)
// lab: 01
// base: reference
// file: scaler.c
// lose: all
// status: defines-outside-api
// expect: refused \[defines-outside-api\].*dl_(pct|fmt_bytes)
#include <stdio.h> // snprintf
double dl_pct(double share, int decimals);
char *dl_fmt_bytes(double bytes, char *buf, size_t len);
double dl_pct(double share, int decimals)
{
    (void)decimals;
    return share < 0 ? 100.0 : 100.0 * share;
}
char *dl_fmt_bytes(double bytes, char *buf, size_t len)
{
    snprintf(buf, len, "%.0f B", bytes);
    return buf;
}
