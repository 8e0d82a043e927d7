// Entry points of the streaming triangular-solve kernels (trsm_stream_kernels.cuh),
// one overload per dtype, each defined in its own instantiation unit.
// Buffers are contiguous; system s uses A + s * a_stride (a_stride = 0: one matrix
// shared by the batch) and B, X + s * n * k. X may be B (in-place). Launches go to
// `stream` and never synchronize the host.
//   trsm:  one pass with the canonical view v (trsm_kernels.cuh: trsm_view).
//   potrs: the forward pass v1 from B into X, then the backward pass v2 in place on X.
#pragma once

#include <c10/util/complex.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/trsm_device.cuh"

namespace batchchol {
namespace cuda {

#define BATCHCHOL_DECLARE_STREAM(T)                                                          \
  void launch_trsm_stream(const T* A, int64_t a_stride, const T* B, T* X, int64_t batch,     \
                          int64_t k, const TrsmView& v, cudaStream_t stream);                \
  void launch_potrs_stream(const T* L, int64_t l_stride, const T* B, T* X, int64_t batch,    \
                           int64_t k, const TrsmView& v1, const TrsmView& v2,                \
                           cudaStream_t stream);
BATCHCHOL_DECLARE_STREAM(float)
BATCHCHOL_DECLARE_STREAM(double)
BATCHCHOL_DECLARE_STREAM(c10::complex<float>)
BATCHCHOL_DECLARE_STREAM(c10::complex<double>)
#undef BATCHCHOL_DECLARE_STREAM

}  // namespace cuda
}  // namespace batchchol
