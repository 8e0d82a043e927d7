// Launcher of the batched Cholesky kernels on raw device buffers (contiguous
// [batch, n, n] row-major), shared by potrf and the posv fallback.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace batchchol {
namespace cuda {

// Kernel families, in the order of the sizes they serve (potrf_kernels.cuh).
enum class PotrfKernel { kRegisters, kShared, kBlocked };

const char* potrf_kernel_name(PotrfKernel k);

// The family used for order n (the tuned table, or BATCHCHOL_POTRF_KERNEL when it
// names a family that supports n).
template <typename T>
PotrfKernel choose_potrf_kernel(int n);

// L (may not alias A) receives the factor with the other triangle zeroed;
// info[batch] the LAPACK info. Asynchronous on `stream`.
template <typename T>
void launch_potrf(const T* A, T* L, int* info, int64_t batch, int n, bool upper,
                  cudaStream_t stream);

}  // namespace cuda
}  // namespace batchchol
