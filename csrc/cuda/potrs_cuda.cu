// CUDA potrs: (L L^H) X = B as L Y = B then L^H X = Y (upper: U^H Y = B, U X = Y),
// both substitutions in one kernel, by the warp (or lane) that owns the system's
// columns (streaming, column-per-lane, block-per-system, panel or warp-per-system
// kernels: trsm_pick_kernel).
#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/batching.h"
#include "common/checks.h"
#include "common/ops.h"
#include "cuda/solve_single.h"
#include "cuda/trsm_block_launch.h"
#include "cuda/trsm_cols_launch.h"
#include "cuda/trsm_kernels.cuh"
#include "cuda/trsm_launch.h"
#include "cuda/trsm_panel_launch.h"
#include "cuda/trsm_stream_launch.h"

namespace batchchol {
namespace {

using cuda::TrsmBatchParams;
using cuda::TrsmView;

// Float64 past n = 256 with 16 columns: where one 16-column group per system would take
// the four-block kernel to hold one wave (potrs_mma_four_blocks), two 8-column groups on
// the three-block kernel are faster. The launch is bound by DRAM traffic, and the split
// moves less of it: the products re-read solved rows Y[C], and a wave of 8-column warps
// holds ~1,584 x 32 KB of them (about the L2) against 2,000 x 64 KB, while a system's two
// warps share its tiles through L1 (ncu at n = 512: 5.6 against 6.6 GB, L2 hits 17.7%
// against 7.3%; results/h100-2026-11-27-potrs512-cpw-ncu.txt). H100, one process
// (results/h100-2026-11-27-cpw8-grid-tune_trsm.txt), 2,000 systems, 16 / 8 columns a
// group: n = 320 0.984 / 0.928 ms, 384 1.418 / 1.313, 448 1.919 / 1.793, 512 2.429 / 2.262.
// Elsewhere the split lost or gained little: 1,000 systems (half a wave) 0.43 -> 0.55 ms at
// n = 320, 4,000 up to 4% slower, 8,000 2-7% faster (several waves either way: not taken);
// 12 columns (one 8- and one 4-column launch) up to 1.9x slower. BATCHCHOL_TRSM_MAX_CPW=16
// keeps one group; BATCHCHOL_POTRS_MMA_BLOCKS=3|4 decides the split too (it answers
// potrs_mma_four_blocks), so an A/B of the block count alone sets both.
template <typename T>
bool potrs_split_wide_groups(int64_t n, int64_t k, int64_t batch) {
  if constexpr (std::is_same_v<T, double>) {
    if (n <= 256 || k != 16 || !cuda::trsm_mma_enabled()) return false;
    const auto kernel3 = cuda::potrs_warp_mma_kernel<T, 16>;
    const size_t smem = cuda::kTrsmWarps * cuda::trsm_warp_smem_bytes<T, 16, true>();
    cuda::allow_dynamic_smem(kernel3, smem);  // before its occupancy query
    return cuda::potrs_mma_four_blocks(kernel3, cuda::potrs_warp_mma4_kernel<T, 16>, batch, smem);
  }
  return false;
}

template <typename T>
void launch_potrs_typed(const T* L, int64_t l_stride, const T* B, T* X, int64_t batch, int64_t n,
                        int64_t k, bool upper, bool a_transposed) {
  const auto stream = at::cuda::getCurrentCUDAStream();
  // Forward: op = L (lower) or U^H (upper); backward: the conjugate transpose of it.
  TrsmView v1 = cuda::trsm_view(n, k, upper, /*left=*/true, /*transpose=*/upper, false);
  TrsmView v2 = cuda::trsm_view(n, k, upper, /*left=*/true, /*transpose=*/!upper, false);
  if (a_transposed) {  // as in launch_trsm: read the stored transposes the other way
    v1.trans = !v1.trans;
    v2.trans = !v2.trans;
  }
  v1.async_tiles = v2.async_tiles = cuda::trsm_async_dtype<T>();  // trsm_tile_start
  const TrsmKernel family = trsm_pick_kernel(n, k, cuda::IsComplex<T>::value, sizeof(T) == 8,
                                             /*potrs=*/true, batch);
  if (family == TrsmKernel::kStream) {
    cuda::launch_potrs_stream(L, l_stride, B, X, batch, k, v1, v2, stream);
    return;
  }
  if constexpr (!cuda::IsComplex<T>::value) {
    if (family == TrsmKernel::kColumns) {
      cuda::launch_potrs_cols(L, l_stride, B, X, batch, k, v1, v2, stream);
      return;
    }
    if (family == TrsmKernel::kBlock) {
      cuda::launch_potrs_block(L, l_stride, B, X, batch, k, v1, v2, stream);
      return;
    }
    if (family == TrsmKernel::kPanel) {
      cuda::launch_potrs_panel(L, l_stride, B, X, batch, k, v1, v2, stream);
      return;
    }
  }
  int max_cpw = trsm_max_columns_per_warp(n, k, sizeof(T) == 8);
  if (max_cpw == 0 && potrs_split_wide_groups<T>(n, k, batch)) max_cpw = 8;
  TrsmBatchParams p{};
  p.batch = batch;
  p.a_stride = l_stride;
  p.b_stride = n * k;
  cuda::trsm_split_columns<T>(k, [&](auto cpw, int64_t col_begin, int64_t col_end) {
    constexpr int CPW = decltype(cpw)::value;
    cuda::with_trsm_mma<T, CPW>([&](auto mma) {
      constexpr bool kMma = decltype(mma)::value;
      // kernel4: the same solve at four blocks per SM, taken where that holds the launch's
      // warps in one wave (potrs_mma_four_blocks); kernel alone where there is none.
      const auto launch = [&](auto kernel, auto kernel4) {
        size_t smem = 0;
        const dim3 grid =
            cuda::trsm_prepare_launch<T, CPW, kMma>(kernel, p, col_begin, col_end, smem);
        if (kernel4 != kernel &&
            cuda::potrs_mma_four_blocks(kernel, kernel4, p.batch * p.groups, smem))
          kernel = kernel4;
        TrsmView w1 = v1, w2 = v2;
        w1.y_keep = w2.y_keep = cuda::trsm_y_keep<T>(p.batch * p.groups, CPW, [&] {
          return cuda::resident_per_sm_cached(kernel, cuda::kTrsmWarps * 32, smem);
        });
        kernel<<<grid, cuda::kTrsmWarps * 32, smem, stream>>>(L, B, X, w1, w2, p);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
      };
      if constexpr (kMma) {
        launch(cuda::potrs_warp_mma_kernel<T, CPW>, cuda::potrs_warp_mma4_kernel<T, CPW>);
      } else {
        launch(cuda::potrs_warp_kernel<T, CPW>, cuda::potrs_warp_kernel<T, CPW>);
      }
    });
  }, max_cpw);
}

}  // namespace

void launch_potrs(const at::Tensor& L, int64_t l_stride, const at::Tensor& B, at::Tensor& X,
                  bool upper, bool a_transposed) {
  TORCH_CHECK(L.dim() == 3 && B.dim() == 3 && X.sizes() == B.sizes() &&
                  B.size(1) == L.size(-1),
              "batchchol.launch_potrs: expected L [batch_a, n, n], B and X [batch, n, k]");
  TORCH_CHECK(L.is_contiguous() && B.is_contiguous() && X.is_contiguous(),
              "batchchol.launch_potrs: tensors must be contiguous");
  const int64_t n = L.size(-1);
  const int64_t batch = B.size(0);
  const int64_t k = B.size(2);
  TORCH_CHECK(n < (int64_t(1) << 30), "batchchol.launch_potrs: n too large");
  if (batch == 0 || n == 0 || k == 0) return;
  const at::cuda::OptionalCUDAGuard guard(device_of(L));
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES(L.scalar_type(), "batchchol_potrs_cuda", [&] {
    launch_potrs_typed<scalar_t>(L.const_data_ptr<scalar_t>(), l_stride,
                                 B.const_data_ptr<scalar_t>(), X.mutable_data_ptr<scalar_t>(),
                                 batch, n, k, upper, a_transposed);
  });
}

at::Tensor potrs_cuda(const at::Tensor& L, const at::Tensor& B, bool upper) {
  check_solve_op(kPotrs, "L", L, "B", B, /*left=*/true);
  const at::cuda::OptionalCUDAGuard guard(device_of(L));
  auto s = make_solve_batch(L, B, /*allow_transposed=*/true);
  auto X = at::empty(s.out_shape, B.options().memory_format(at::MemoryFormat::Contiguous));
  if (s.batch == 0 || s.n == 0 || s.cols == 0) return X;
  if (cuda::solve_single_applies(s.batch, s.n)) return potrs_single(L, B, upper);
  auto Xflat = view_batch(X, s.batch, s.rows, s.cols);
  launch_potrs(s.A, s.a_stride, s.B, Xflat, upper, s.a_transposed);
  return X;
}

TORCH_LIBRARY_IMPL(batchchol, CUDA, m) { m.impl("potrs", &potrs_cuda); }

}  // namespace batchchol
