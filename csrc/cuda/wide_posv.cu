// Instantiations and launches of the wide family's fused posv (wide_solve.cuh).
#include <c10/cuda/CUDAException.h>
#include <c10/util/Exception.h>

#include <string>

#include "cuda/warp_chol_launch.cuh"
#include "cuda/wide_launch.h"
#include "cuda/wide_solve.cuh"

namespace batchchol {
namespace cuda {
namespace {

template <typename T, int NW>
void launch_posv_wide_nw(const T* A, const T* B, T* X, T* L, int* info, int64_t batch, int n,
                         int k, bool upper, cudaStream_t stream) {
  const StageLayout lay = make_stage_layout<32>(n);
  const size_t smem = wide_smem_bytes<T, NW>(n, lay.pitch);
  auto kernel = posv_wide_kernel<T, NW>;
  allow_dynamic_smem(kernel, smem);
  kernel<<<static_cast<unsigned>(batch), 32 * NW, smem, stream>>>(
      A, B, X, L, info, k, lay, upper, stage_vectorizable<T>(A, L, n));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

template <typename T>
void launch_posv_wide_any(const T* A, const T* B, T* X, T* L, int* info, int64_t batch, int n,
                          int k, bool upper, cudaStream_t stream) {
  TORCH_CHECK(n >= kWideMinN && n <= kPosvWideMaxN && batch <= INT32_MAX,
              "batchchol: the wide posv kernel does not serve n = ", std::to_string(n));
  launch_posv_wide_nw<T, 2>(A, B, X, L, info, batch, n, k, upper, stream);
}

}  // namespace

void launch_posv_wide(const float* A, const float* B, float* X, float* L, int* info,
                      int64_t batch, int n, int k, bool upper, cudaStream_t stream) {
  launch_posv_wide_any(A, B, X, L, info, batch, n, k, upper, stream);
}

void launch_posv_wide(const double* A, const double* B, double* X, double* L, int* info,
                      int64_t batch, int n, int k, bool upper, cudaStream_t stream) {
  launch_posv_wide_any(A, B, X, L, info, batch, n, k, upper, stream);
}

}  // namespace cuda
}  // namespace batchchol
