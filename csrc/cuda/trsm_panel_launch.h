// Entry points of the panel triangular solves (trsm_panel_kernels.cuh) for the real
// dtypes, one overload per dtype, each defined in its own instantiation unit.
// Conventions as in trsm_block_launch.h: contiguous buffers, system s uses
// A + s * a_stride (0: one shared matrix) and B, X + s * n * k, X may be B (in-place),
// launches go to `stream` and never synchronize the host.
//   trsm:  one solve with the canonical view v (trsm_kernels.cuh: trsm_view).
//   potrs: the forward view v1 then the backward view v2, B into X.
// panel_fits: whether a block for order n fits the device's shared memory (the
// right-hand sides of the system stay there; float64 up to n ~ 5,000 with one column).
// panel_preferred: whether the panel kernels are the default for these systems (they
// fit and the batch gives at most ~2 blocks per SM: trsm_panel_kernels.cuh).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/trsm_device.cuh"

namespace batchchol {
namespace cuda {

#define BATCHCHOL_DECLARE_PANEL(T)                                                           \
  bool panel_fits(int64_t n, const T*);                                                      \
  bool panel_preferred(int64_t n, int64_t k, int64_t batch, const T*);                       \
  void launch_trsm_panel(const T* A, int64_t a_stride, const T* B, T* X, int64_t batch,      \
                         int64_t k, const TrsmView& v, cudaStream_t stream);                 \
  void launch_potrs_panel(const T* L, int64_t l_stride, const T* B, T* X, int64_t batch,     \
                          int64_t k, const TrsmView& v1, const TrsmView& v2,                 \
                          cudaStream_t stream);
BATCHCHOL_DECLARE_PANEL(float)
BATCHCHOL_DECLARE_PANEL(double)
#undef BATCHCHOL_DECLARE_PANEL

}  // namespace cuda
}  // namespace batchchol
