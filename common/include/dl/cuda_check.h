/* dl/cuda_check.h — the one check macro per CUDA library (for .cu files only).
 *
 * Contract
 * - DL_CUDA_CHECK(call), DL_CUBLAS_CHECK(call), DL_NCCL_CHECK(call) evaluate a
 *   call; on failure they record "file:line: call failed: <library's error
 *   string>" as the last error, print it to stderr, and return DL_ERR_CUDA,
 *   DL_ERR_CUBLAS or DL_ERR_NCCL from the enclosing function (which must
 *   return dl_status).
 * - DL_LAUNCH_CHECK() follows every kernel launch: it catches launch errors
 *   (bad configuration, no kernel image for this GPU) at the launch site.
 */
#ifndef DL_CUDA_CHECK_H
#define DL_CUDA_CHECK_H

#include <cublas_v2.h> // cublasStatus_t
#include <cuda_runtime.h> // cudaError_t, cudaGetErrorString

#include "dl/status.h" // dl_status, dl_error_set

#ifdef __cplusplus
extern "C" {
#endif
/* Human-readable cuBLAS status (cublasGetStatusString). Cannot fail. */
const char *dl_cublas_error_string(cublasStatus_t st);
dl_status dl_cuda_fail_(dl_status st, const char *file, int line, const char *call, const char *err);
#ifdef __cplusplus
}
#endif

#define DL_CUDA_CHECK(call)                                                                          \
    do {                                                                                             \
        cudaError_t dl_e_ = (call);                                                                  \
        if (dl_e_ != cudaSuccess)                                                                    \
            return dl_cuda_fail_(DL_ERR_CUDA, __FILE__, __LINE__, #call, cudaGetErrorString(dl_e_)); \
    } while (0)

#define DL_CUBLAS_CHECK(call)                                                                              \
    do {                                                                                                   \
        cublasStatus_t dl_s_ = (call);                                                                     \
        if (dl_s_ != CUBLAS_STATUS_SUCCESS)                                                                \
            return dl_cuda_fail_(DL_ERR_CUBLAS, __FILE__, __LINE__, #call, dl_cublas_error_string(dl_s_)); \
    } while (0)

#define DL_LAUNCH_CHECK() DL_CUDA_CHECK(cudaGetLastError())

#ifdef NCCL_H_
#define DL_NCCL_CHECK(call)                                                                          \
    do {                                                                                             \
        ncclResult_t dl_r_ = (call);                                                                 \
        if (dl_r_ != ncclSuccess)                                                                    \
            return dl_cuda_fail_(DL_ERR_NCCL, __FILE__, __LINE__, #call, ncclGetErrorString(dl_r_)); \
    } while (0)
#endif

#endif /* DL_CUDA_CHECK_H */
