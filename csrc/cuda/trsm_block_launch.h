// Entry points of the block-per-system triangular solves (trsm_block_kernels.cuh) for
// the real dtypes and n <= kBlockMaxOrder, one overload per dtype, each defined in its
// own instantiation unit. Conventions as in trsm_cols_launch.h: contiguous buffers,
// system s uses A + s * a_stride (0: one shared matrix) and B, X + s * n * k, X may be
// B (in-place), launches go to `stream` and never synchronize the host.
//   trsm:  one solve with the canonical view v (trsm_kernels.cuh: trsm_view).
//   potrs: the forward view v1 then the backward view v2, B into X.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/trsm_device.cuh"

namespace batchchol {
namespace cuda {

constexpr int kBlockMaxOrder = 128;

#define BATCHCHOL_DECLARE_BLOCK(T)                                                           \
  void launch_trsm_block(const T* A, int64_t a_stride, const T* B, T* X, int64_t batch,      \
                         int64_t k, const TrsmView& v, cudaStream_t stream);                 \
  void launch_potrs_block(const T* L, int64_t l_stride, const T* B, T* X, int64_t batch,     \
                          int64_t k, const TrsmView& v1, const TrsmView& v2,                 \
                          cudaStream_t stream);
BATCHCHOL_DECLARE_BLOCK(float)
BATCHCHOL_DECLARE_BLOCK(double)
#undef BATCHCHOL_DECLARE_BLOCK

}  // namespace cuda
}  // namespace batchchol
