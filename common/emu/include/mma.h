/* mma.h — refused on the emulated CUDA device (common/emu/README.md): a header of
 * this name may also sit on the compiler's default path (a CUDA toolkit linked into
 * /usr/local/include), and must not be mixed with the emulation's. */
#error "mma.h is not implemented by the emulated CUDA device (warp matrix multiply (WMMA): tensor cores)"
