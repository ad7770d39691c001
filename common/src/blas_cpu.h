/* blas_cpu.h — the CPU BLAS as the kit opened it (blas_cpu.c): row-major
 * sgemm and sgemv with the arguments already validated by blas.c, and what
 * was opened. The first call of any of these opens and checks the library
 * (once per process, thread-safe). Cannot fail: when no OpenBLAS kernels can
 * be opened or pass the check, the kit's own loops compute (one line on
 * stderr says so). ta/tb: 0 as stored, 1 transposed. */
#ifndef DL_BLAS_CPU_H
#define DL_BLAS_CPU_H

#include "dl/blas.h" // dl_blas_info

#ifdef __cplusplus
extern "C" { // (the emulated CUDA device's cuBLAS calls blas_cpu_sgemm from device_cuda.cu)
#endif

void blas_cpu_sgemm(int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                    float beta, float *C, int ldc);
void blas_cpu_sgemv(int ta, int M, int N, float alpha, const float *A, int lda, const float *x, float beta, float *y);
void blas_cpu_set_threads(int n);
int blas_cpu_threads(void);
void blas_cpu_info(dl_blas_info *out);
void blas_cpu_set_flush(int on);

#ifdef __cplusplus
}
#endif
#endif /* DL_BLAS_CPU_H */
