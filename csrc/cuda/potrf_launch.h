// Launcher of the batched Cholesky kernels on raw device buffers (contiguous
// [batch, n, n] row-major), shared by potrf and the posv fallback.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace batchchol {
namespace cuda {

// L (may not alias A) receives the factor with the other triangle zeroed;
// info[batch] the LAPACK info. Asynchronous on `stream`.
template <typename T>
void launch_potrf(const T* A, T* L, int* info, int64_t batch, int n, bool upper,
                  cudaStream_t stream);

// Whether posv fuses its solve into the wide family's kernel for order n: where
// launch_potrf<T> runs wide (the size dispatch, or the family BATCHCHOL_POTRF_KERNEL
// forces), posv's L then potrf's bit for bit; and at float64 53..kPosvWideMaxN where
// potrf runs tile4 (the size dispatch's choice there; or forced), posv's L then another
// algorithm's, as accurate. There is no tile posv kernel, and the fused one beat wide's
// potrf + potrs there (posv_cuda.cu, H100); tile4's potrf saves less than that lead
// (float64 64, 10,000 matrices: 0.032 ms on an H200, against the fused kernel's ~0.05
// per 10,000 at one column), not measured against it directly.
template <typename T>
bool posv_fuses_wide(int n);

// Whether one matrix of order n may go to cuSOLVER (potrf_single.cu): where launch_potrf<T>
// runs the multi-launch blocked family, and at float64 129..160, blocked's when the
// route was measured (tile16's from 145 since the thirty-ninth round, tile's since the
// forty-second: one tile block for one matrix has not been measured against cuSOLVER).
template <typename T>
bool potrf_single_candidate(int n);

}  // namespace cuda
}  // namespace batchchol
