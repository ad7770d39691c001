/* cuda.h — refused on the emulated CUDA device (common/emu/README.md): a header of
 * this name may also sit on the compiler's default path (a CUDA toolkit linked into
 * /usr/local/include), and must not be mixed with the emulation's. */
#error "cuda.h is not implemented by the emulated CUDA device (the driver API: use the runtime API of cuda_runtime.h)"
