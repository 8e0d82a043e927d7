// Entry points of the column-per-lane triangular solves (trsm_cols_kernels.cuh) for
// the real dtypes and n <= kColsMaxOrder, one overload per dtype, each defined in its
// own instantiation unit. Conventions as in trsm_stream_launch.h: contiguous buffers,
// system s uses A + s * a_stride (0: one shared matrix) and B, X + s * n * k, X may be
// B (in-place), launches go to `stream` and never synchronize the host.
//   trsm:  one solve with the canonical view v (trsm_kernels.cuh: trsm_view).
//   potrs: the forward view v1 then the backward view v2, B into X.
// The _ragged variants solve a whole ragged batch whose valid systems have orders up to
// max_order (at most kColsRaggedMaxOrder; invalid ones get NaN where their X block is valid,
// as in trsm_ragged_kernels.cuh); left solves only (B and X of system s n_s x k
// row-major at b_offsets[s]); the views give the flags, not the strides.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/trsm_device.cuh"

namespace batchchol {
namespace cuda {

constexpr int kColsMaxOrder = 32;
constexpr int kColsRaggedMaxOrder = 16;  // the _ragged variants' largest max_order

// A ragged batch's device metadata (trsm_ragged_kernels.cuh's conventions).
struct RaggedCols {
  int64_t count;
  const int64_t* a_offsets;
  const int64_t* b_offsets;
  const int* sizes;
  const int* status;      // null when validated on the host
  const int* rhs_status;  // with status: the right-hand-side block's own status
};

#define BATCHCHOL_DECLARE_COLS(T)                                                            \
  void launch_trsm_cols(const T* A, int64_t a_stride, const T* B, T* X, int64_t batch,       \
                        int64_t k, const TrsmView& v, cudaStream_t stream);                  \
  void launch_potrs_cols(const T* L, int64_t l_stride, const T* B, T* X, int64_t batch,      \
                         int64_t k, const TrsmView& v1, const TrsmView& v2,                  \
                         cudaStream_t stream);                                               \
  void launch_trsm_cols_ragged(const T* A, const T* B, T* X, const RaggedCols& r, int64_t k, \
                               int max_order, const TrsmView& v, cudaStream_t stream);       \
  void launch_potrs_cols_ragged(const T* L, const T* B, T* X, const RaggedCols& r,           \
                                int64_t k, int max_order, const TrsmView& v1,                \
                                const TrsmView& v2, cudaStream_t stream);
BATCHCHOL_DECLARE_COLS(float)
BATCHCHOL_DECLARE_COLS(double)
#undef BATCHCHOL_DECLARE_COLS

}  // namespace cuda
}  // namespace batchchol
