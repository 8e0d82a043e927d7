// Instantiations and launches of the wide potrf family (wide_kernels.cuh): NW warps per
// matrix for 32 (NW - 1) < n <= 32 NW.
#include <c10/cuda/CUDAException.h>
#include <c10/util/Exception.h>

#include <string>

#include "cuda/ragged_bins.h"
#include "cuda/warp_chol_launch.cuh"
#include "cuda/wide_kernels.cuh"
#include "cuda/wide_launch.h"

namespace batchchol {
namespace cuda {
namespace {

// Calls f(Int<NW>{}) for nw = NW warps per matrix, 2..wide_max_n<T>() / 32.
template <typename T, typename F>
void with_wide_warps(int nw, F&& f) {
  if (nw == 2) return f(Int<2>{});
  if constexpr (wide_max_n<T>() > 64) {
    if (nw == 3) return f(Int<3>{});
    return f(Int<4>{});
  }
}

template <typename T, int NW>
void launch_wide(const T* A, T* L, int* info, int64_t batch, int n, bool upper,
                 cudaStream_t stream) {
  const StageLayout lay = make_stage_layout<32>(n);
  const size_t smem = wide_smem_bytes<T, NW>(n, lay.pitch);
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
  with_wide_warps<T>((n + 31) / 32, [&](auto nw) {
    launch_wide<T, decltype(nw)::value>(A, L, info, batch, n, upper, stream);
  });
}

template <typename T, int NW>
void launch_wide_list(const T* A, T* L, int* info, const RaggedBatch& rb, const SizeGroups& tg,
                      int g, bool upper, cudaStream_t stream) {
  const size_t smem = wide_smem_bytes<T, NW>(32 * NW, 32 * NW | 1);
  auto kernel = potrf_wide_list_kernel<T, NW>;
  allow_dynamic_smem(kernel, smem);
  kernel<<<static_cast<unsigned>(rb.count), 32 * NW, smem, stream>>>(
      A, L, info, rb.offsets.const_data_ptr<int64_t>(), rb.sizes.const_data_ptr<int>(),
      tg.counts(), tg.list(), g, upper);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

template <typename T>
void launch_wide_group_any(const T* A, T* L, int* info, const RaggedBatch& rb,
                           const SizeGroups& tg, int g, bool upper, cudaStream_t stream) {
  const int nw = tg.nt_hi - g;
  TORCH_CHECK(g >= 0 && g < tg.groups && tg.stride == 0 && nw >= 2 && 32 * nw <= wide_max_n<T>(),
              "batchchol: the wide potrf kernels do not serve tile group ", g);
  with_wide_warps<T>(nw, [&](auto w) {
    launch_wide_list<T, decltype(w)::value>(A, L, info, rb, tg, g, upper, stream);
  });
}

}  // namespace

void launch_potrf_wide_group(const float* A, float* L, int* info, const RaggedBatch& rb,
                             const SizeGroups& tg, int g, bool upper, cudaStream_t stream) {
  launch_wide_group_any(A, L, info, rb, tg, g, upper, stream);
}

void launch_potrf_wide_group(const double* A, double* L, int* info, const RaggedBatch& rb,
                             const SizeGroups& tg, int g, bool upper, cudaStream_t stream) {
  launch_wide_group_any(A, L, info, rb, tg, g, upper, stream);
}

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
