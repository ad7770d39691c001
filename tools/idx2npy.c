/* idx2npy.c — an IDX pair's images as every run reads them, in a .npy.
 *
 *   idx2npy IMAGES LABELS OUT   reads IMAGES and LABELS (plain or .gz IDX files
 *                               of unsigned bytes: images (n, rows, cols),
 *                               labels (n)) as the kit's loader does
 *                               (dl_read_idx_pair: float32, byte / 255) and
 *                               writes the images to OUT, float32 (n, rows ×
 *                               cols), whole or not at all.
 *
 * make writes Fashion-MNIST's IMAGES.f32.npy beside its decompressed copy
 * (build/data/fashion-mnist), with this program compiled from the loader's own
 * files alone (build/data/idx2npy: no library, no build's flags): the loader
 * maps that file instead of converting the bytes in every rank
 * (common/src/idx.c). The floats are the loader's own, bit for bit (unit test
 * fashion_mnist_float_copy). Exit 2 on bad arguments or input, saying which. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h> // fprintf

#include "dl/data.h"

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: idx2npy IMAGES LABELS OUT   (IDX files, plain or .gz; OUT: a .npy)\n");
        return 2;
    }
    dl_dataset ds;
    dl_status st = dl_read_idx_pair(argv[1], argv[2], 256, &ds);
    if (st == DL_OK && ds.map != NULL) {
        // (a float copy already beside IMAGES was read: the file is written from the IDX bytes, not from it)
        dl_dataset_free(&ds);
        fprintf(stderr, "idx2npy: %s.f32.npy is newer than %s: remove it first\n", argv[1], argv[1]);
        return 2;
    }
    if (st == DL_OK)
        st = dl_npy_write_f32(argv[3], ds.X, ds.n, ds.d);
    if (st != DL_OK) {
        fprintf(stderr, "idx2npy: %s\n", dl_last_error());
        return 2;
    }
    dl_dataset_free(&ds);
    return 0;
}
