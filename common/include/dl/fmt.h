/* dl/fmt.h — numbers as a reader sees them: shares as percentages, byte
 * counts with binary prefixes.
 *
 * Contract
 * - dl_pct(share, decimals) is 100 x share, ready for printf("%.*f%%"):
 *   a value that would print as "-0", "-0.0", ... at that many decimals
 *   (negative zero, or a tiny negative share such as -1e-12 left by rounding
 *   in a difference of times) comes back as +0, so no share is ever printed
 *   as "-0.0%". Any other value, NaN and +-inf included, is 100 x share
 *   unchanged. decimals below 0 count as 0, above 60 as 60 (for %g, which
 *   shows any magnitude, pass 60: only negative zero is changed). Cannot fail.
 * - dl_fmt_bytes(bytes, buf, len) writes a byte count with binary (IEC)
 *   prefixes — 1 KiB = 1024 B: "8 B", "64 KiB", "1.5 MiB", "2 GiB"; whole
 *   multiples and values of 100 or more without decimals, others with three
 *   significant digits ("97.7 KiB" for 100000 bytes). Negative or non-finite input is written
 *   with %g and "B". Truncates to len (NUL-terminated when len > 0); returns
 *   buf. Cannot fail.
 */
#ifndef DL_FMT_H
#define DL_FMT_H

#include <stddef.h> // size_t

#ifdef __cplusplus
extern "C" {
#endif

double dl_pct(double share, int decimals);
char *dl_fmt_bytes(double bytes, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* DL_FMT_H */
