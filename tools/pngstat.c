/* pngstat.c — what a screenshot shows, in numbers, for tools/check-report.sh.
 *
 *   pngstat FILE.png
 *
 * Contract
 * - Prints one line: "width W height H background B ink_rows R colour C":
 *   B is the share of pixels equal to the top-left one (the page's
 *   background), R the share of rows holding at least one other pixel, C the
 *   share of pixels with a clear hue (largest minus smallest channel >= 64:
 *   plot lines, heat maps, coloured boxes; text is grey). B, R, C are in [0, 1].
 * - Reads what browsers write: 8-bit greyscale, RGB, grey+alpha or RGBA, not
 *   interlaced. Anything else, or a damaged file, exits 1 with the reason;
 *   bad usage exits 2. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h> // uint8_t, uint32_t
#include <stdio.h> // printf
#include <stdlib.h> // malloc
#include <string.h> // memcmp

#include <zlib.h> // uncompress

#include "dl/fs.h" // dl_read_file

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int paeth(int a, int b, int c)
{
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    if (pa <= pb && pa <= pc)
        return a;
    return pb <= pc ? b : c;
}

/* Undoes the per-row filters in place: raw holds h rows of 1 + stride bytes;
 * bpp is bytes per pixel. Returns 0, or -1 on an unknown filter type. */
static int unfilter(unsigned char *raw, size_t h, size_t stride, size_t bpp)
{
    for (size_t y = 0; y < h; y++) {
        unsigned char *row = raw + y * (stride + 1), *cur = row + 1;
        const unsigned char *up = y > 0 ? row - stride : NULL; // the previous row's pixels
        for (size_t x = 0; x < stride; x++) {
            int a = x >= bpp ? cur[x - bpp] : 0, b = up != NULL ? up[x] : 0;
            int c = x >= bpp && up != NULL ? up[x - bpp] : 0;
            switch (row[0]) {
            case 0:
                break;
            case 1:
                cur[x] = (unsigned char)(cur[x] + a);
                break;
            case 2:
                cur[x] = (unsigned char)(cur[x] + b);
                break;
            case 3:
                cur[x] = (unsigned char)(cur[x] + (a + b) / 2);
                break;
            case 4:
                cur[x] = (unsigned char)(cur[x] + paeth(a, b, c));
                break;
            default:
                return -1;
            }
        }
    }
    return 0;
}

typedef struct image {
    uint32_t w, h;
    size_t bpp; // bytes per pixel
    unsigned char *raw; // h rows, each a filter byte then w * bpp bytes
} image;

/* Decodes the PNG png (len bytes) into img (img->raw malloc'ed). Returns
 * NULL, or why it cannot (img->raw then NULL). */
static const char *decode(const unsigned char *png, size_t len, image *img)
{
    img->raw = NULL;
    if (len < 33 || memcmp(png, "\x89PNG\r\n\x1a\n", 8) != 0)
        return "not a PNG (no signature)";
    // ---- chunks: IHDR, then the IDATs make one zlib stream ----
    int depth = 0, ctype = -1, interlace = 0;
    img->w = img->h = 0;
    unsigned char *z = malloc(len);
    size_t zlen = 0;
    if (z == NULL)
        return "out of memory";
    for (size_t at = 8; at + 12 <= len;) {
        uint32_t n = be32(png + at);
        const unsigned char *type = png + at + 4, *data = png + at + 8;
        if (n > len - at - 12) {
            free(z);
            return "a chunk runs past the end of the file";
        }
        if (memcmp(type, "IHDR", 4) == 0 && n >= 13) {
            img->w = be32(data);
            img->h = be32(data + 4);
            depth = data[8];
            ctype = data[9];
            interlace = data[12];
        } else if (memcmp(type, "IDAT", 4) == 0) {
            memcpy(z + zlen, data, n);
            zlen += n;
        } else if (memcmp(type, "IEND", 4) == 0) {
            break;
        }
        at += 12 + (size_t)n;
    }
    img->bpp = ctype == 0 ? 1 : ctype == 2 ? 3 : ctype == 4 ? 2 : ctype == 6 ? 4 : 0;
    const char *why = NULL;
    if (img->w == 0 || img->h == 0 || img->w > 100000 || img->h > 100000)
        why = "no IHDR or an absurd size";
    else if (depth != 8 || img->bpp == 0 || interlace != 0)
        why = "only 8-bit grey, RGB, grey+alpha and RGBA without interlace are read";
    // ---- pixels ----
    size_t stride = (size_t)img->w * img->bpp;
    uLongf rawlen = (uLongf)((stride + 1) * img->h), got = rawlen;
    if (why == NULL) {
        img->raw = malloc(rawlen);
        if (img->raw == NULL)
            why = "out of memory";
    }
    if (why == NULL && (uncompress(img->raw, &got, z, (uLong)zlen) != Z_OK || got != rawlen))
        why = "the image data does not inflate to width x height pixels";
    if (why == NULL && unfilter(img->raw, img->h, stride, img->bpp) != 0)
        why = "unknown row filter";
    free(z);
    if (why != NULL) {
        free(img->raw);
        img->raw = NULL;
    }
    return why;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: pngstat FILE.png\n");
        return 2;
    }
    char *text = NULL;
    size_t len = 0;
    image img;
    const char *why =
        dl_read_file(argv[1], &text, &len) != DL_OK ? "cannot read" : decode((const unsigned char *)text, len, &img);
    free(text);
    if (why != NULL) {
        fprintf(stderr, "pngstat: %s: %s\n", argv[1], why);
        return 1;
    }
    // ---- statistics: grey is repeated into r, g, b; alpha is ignored ----
    const size_t w = img.w, h = img.h, bpp = img.bpp, stride = w * bpp;
    const unsigned char *px0 = img.raw + 1;
    int r0 = px0[0], g0 = bpp >= 3 ? px0[1] : r0, b0 = bpp >= 3 ? px0[2] : r0;
    size_t same = 0, coloured = 0, ink_rows = 0;
    for (size_t y = 0; y < h; y++) {
        const unsigned char *row = img.raw + y * (stride + 1) + 1;
        int ink = 0;
        for (size_t x = 0; x < w; x++) {
            const unsigned char *p = row + x * bpp;
            int r = p[0], g = bpp >= 3 ? p[1] : r, b = bpp >= 3 ? p[2] : r;
            int hi = r > g ? (r > b ? r : b) : (g > b ? g : b), lo = r < g ? (r < b ? r : b) : (g < b ? g : b);
            if (r == r0 && g == g0 && b == b0)
                same++;
            else
                ink = 1;
            coloured += hi - lo >= 64;
        }
        ink_rows += ink;
    }
    double px = (double)w * h;
    printf("width %zu height %zu background %.4f ink_rows %.4f colour %.4f\n", w, h, same / px, ink_rows / (double)h,
           coloured / px);
    free(img.raw);
    return 0;
}
