/* fmt.c — dl/fmt.h: percentages that never read "-0.0%", byte counts with
 * binary prefixes. */
#include "dl/fmt.h"

#include <math.h> // isfinite, floor
#include <stdio.h> // snprintf

double dl_pct(double share, int decimals)
{
    double v = 100.0 * share;
    if (v == 0)
        return 0.0; // -0.0 == 0: this also drops the sign of negative zero
    if (!(v < 0) || v <= -1)
        return v; // positive, NaN, or a negative that prints as one
    // printf's own rounding decides: does v print as "-0.00..."?
    char buf[96];
    snprintf(buf, sizeof buf, "%.*f", decimals < 0 ? 0 : decimals > 60 ? 60 : decimals, v);
    for (const char *p = buf + 1; *p != '\0'; p++)
        if (*p != '0' && *p != '.')
            return v;
    return 0.0;
}

char *dl_fmt_bytes(double bytes, char *buf, size_t len)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    if (len == 0)
        return buf;
    if (!isfinite(bytes) || bytes < 0) {
        snprintf(buf, len, "%g B", bytes);
        return buf;
    }
    int u = 0;
    double v = bytes;
    while (v >= 1024 && u < (int)(sizeof unit / sizeof unit[0]) - 1)
        v /= 1024, u++;
    if (v == floor(v) || v >= 100) // three or four digits: no decimals, never "1.02e+03"
        snprintf(buf, len, "%.0f %s", v, unit[u]);
    else
        snprintf(buf, len, "%.3g %s", v, unit[u]);
    return buf;
}
