// Instantiations and launches of the wide potrf family (wide_chol.cuh): NW warps per
// matrix for 32 (NW - 1) < n <= 32 NW.
#include <c10/cuda/CUDAException.h>
#include <c10/util/Exception.h>

#include <string>

#include "cuda/warp_chol_launch.cuh"
#include "cuda/wide_chol.cuh"
#include "cuda/wide_launch.h"

namespace batchchol {
namespace cuda {
namespace {

template <typename T, int NW>
void launch_wide(const T* A, T* L, int* info, int64_t batch, int n, bool upper,
                 cudaStream_t stream) {
  const StageLayout lay = make_stage_layout<32>(n);
  const size_t smem = (wide_colbuf<NW>() + size_t(n) * lay.pitch) * sizeof(T);
  auto kernel = potrf_wide_kernel<T, NW>;
  allow_dynamic_smem(kernel, smem);
  kernel<<<static_cast<unsigned>(batch), 32 * NW, smem, stream>>>(
      A, L, info, lay, upper, stage_vectorizable<T>(A, L, n));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

template <typename T>
void launch_wide_any(const T* A, T* L, int* info, int64_t batch, int n, bool upper,
                     cudaStream_t stream) {
  TORCH_CHECK(n >= kWideMinN && n <= wide_max_n<T>(), "batchchol: the wide potrf kernels ",
              "do not serve n = ", std::to_string(n));
  if (n <= 64) return launch_wide<T, 2>(A, L, info, batch, n, upper, stream);
  if constexpr (wide_max_n<T>() > 64) {
    if (n <= 96) return launch_wide<T, 3>(A, L, info, batch, n, upper, stream);
    return launch_wide<T, 4>(A, L, info, batch, n, upper, stream);
  }
}

}  // namespace

void launch_potrf_wide(const float* A, float* L, int* info, int64_t batch, int n, bool upper,
                       cudaStream_t stream) {
  launch_wide_any(A, L, info, batch, n, upper, stream);
}

void launch_potrf_wide(const double* A, double* L, int* info, int64_t batch, int n, bool upper,
                       cudaStream_t stream) {
  launch_wide_any(A, L, info, batch, n, upper, stream);
}

}  // namespace cuda
}  // namespace batchchol
