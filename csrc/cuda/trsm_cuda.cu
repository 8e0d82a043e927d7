// CUDA trsm: maps the 16 flag combinations onto the canonical lower forward
// substitution of trsm_device.cuh and launches the kernel family that trsm_pick_kernel
// (trsm_launch.h) chooses by size: streaming, column-per-lane, block-per-system, panel
// or warp-per-system.
#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <cstdlib>
#include <cstring>

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

template <typename T>
void launch_trsm_typed(const T* A, int64_t a_stride, const T* B, T* X, int64_t batch, int64_t k,
                       const TrsmView& v) {
  const auto stream = at::cuda::getCurrentCUDAStream();
  const TrsmKernel family = trsm_pick_kernel(v.n, k, cuda::IsComplex<T>::value, sizeof(T) == 8,
                                             /*potrs=*/false, batch);
  if (family == TrsmKernel::kStream) {
    cuda::launch_trsm_stream(A, a_stride, B, X, batch, k, v, stream);
    return;
  }
  if constexpr (!cuda::IsComplex<T>::value) {
    if (family == TrsmKernel::kColumns) {
      cuda::launch_trsm_cols(A, a_stride, B, X, batch, k, v, stream);
      return;
    }
    if (family == TrsmKernel::kBlock) {
      cuda::launch_trsm_block(A, a_stride, B, X, batch, k, v, stream);
      return;
    }
    if (family == TrsmKernel::kPanel) {
      cuda::launch_trsm_panel(A, a_stride, B, X, batch, k, v, stream);
      return;
    }
  }
  TrsmBatchParams p{};
  p.batch = batch;
  p.a_stride = a_stride;
  p.b_stride = int64_t(v.n) * k;
  cuda::trsm_split_columns<T>(k, [&](auto cpw, int64_t col_begin, int64_t col_end) {
    constexpr int CPW = decltype(cpw)::value;
    cuda::with_trsm_mma<T, CPW>([&](auto mma) {
      constexpr bool kMma = decltype(mma)::value;
      auto kernel = cuda::trsm_warp_kernel<T, CPW, kMma>;
      size_t smem = 0;
      const dim3 grid =
          cuda::trsm_prepare_launch<T, CPW, kMma>(kernel, p, col_begin, col_end, smem);
      TrsmView vw = v;
      // trsm_tile_start: the FMA loop's 16-column groups keep the register stage; with
      // the products on the MMAs the copies win (H100, float64, 16 / 32 columns: n = 256
      // 1.862 -> 1.787 / 3.214 -> 3.045 ms, n = 512 1.330 -> 1.315 / 2.189 -> 2.102).
      // Float32 one-column solves to n = 256 keep the register stage too: one tile in flight
      // per warp either way, and its loads issue earlier (thirty-fourth round, H100,
      // results/h100-2026-11-27-diag-tiles-ab-tune_trsm.txt, register stage / copies: n =
      // 128 0.160 / 0.173 ms, 256 0.559 / 0.590, but 512 0.518 / 0.464).
      const bool f32_column = sizeof(T) == 4 && CPW == 1 && v.n <= 256;
      vw.async_tiles = (CPW < 16 || kMma) && !f32_column && cuda::trsm_async_dtype<T>();
      vw.y_keep = cuda::trsm_y_keep<T>(p.batch * p.groups, CPW, [&] {
        return cuda::resident_per_sm_cached(kernel, cuda::kTrsmWarps * 32, smem);
      });
      kernel<<<grid, cuda::kTrsmWarps * 32, smem, stream>>>(A, B, X, vw, p);
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    });
  }, trsm_max_columns_per_warp(v.n, k, sizeof(T) == 8));
}

}  // namespace

TrsmKernel trsm_pick_kernel(int64_t n, int64_t k, bool is_complex, bool is_double, bool potrs,
                            int64_t batch) {
  const bool cols_ok = !is_complex && n <= cuda::kColsMaxOrder;
  const bool block_ok = !is_complex && n <= cuda::kBlockMaxOrder;
  if (const char* forced = std::getenv("BATCHCHOL_TRSM_KERNEL")) {
    if (std::strcmp(forced, "stream") == 0) return TrsmKernel::kStream;
    if (std::strcmp(forced, "warp") == 0) return TrsmKernel::kWarp;
    if (std::strcmp(forced, "block") == 0) {
      if (block_ok) return TrsmKernel::kBlock;
    } else if (std::strcmp(forced, "panel") == 0) {
      const bool panel_ok = !is_complex && (is_double ? cuda::panel_fits(n, (const double*)nullptr)
                                                      : cuda::panel_fits(n, (const float*)nullptr));
      if (panel_ok) return TrsmKernel::kPanel;
    } else {
      TORCH_CHECK(std::strcmp(forced, "cols") == 0,
                  "batchchol: BATCHCHOL_TRSM_KERNEL must be 'stream', 'warp', 'cols', "
                  "'block' or 'panel'");
      if (cols_ok) return TrsmKernel::kColumns;
    }
  }
  // Block-per-system kernels (benchmarks/results/h100-2026-11-24-block-solves-ab.txt,
  // column-major factors): from 8 columns at n = 33..64 (4 for potrs, whose two passes
  // share the staged triangle), from 8 at n = 65..96 (16 for float64 trsm: 8 columns
  // 0.33 ms block, 0.29 warp at n = 96) and from 16 at n = 97..128 (float64 potrs
  // n = 64, 16 columns: 0.28 ms against 0.58 warp; n = 96: 0.62 against 1.00; n = 128:
  // 1.12 against 1.56); at n = 17..32 the same as at 33..64 for float64, while float32
  // keeps the column kernels from 8 columns (trsm 16 columns: 0.218 ms cols, 0.243
  // block) except potrs with 4 to 8 (0.25 against 0.28 cols).
  // Float64 at n = 97..128 since the warp solves run their products on the MMAs
  // (twenty-ninth round, H100, results/h100-2026-11-27-mma-solves-*: trsm n = 128 with
  // 16 columns 0.650 ms warp, 0.722 block; at n = 96 block still won, 0.398 vs 0.455) and
  // copy their tiles evict-first in L2 (thirty-first round, H200,
  // results/h200-2026-11-27-l2first-tune_trsm.txt, part 5, batches of 10,000): warp up to
  // 16 columns, and with 32 (two MMA groups) for trsm and for potrs past n = 112; block
  // for the other counts past 16 (a group of 1-4 columns runs the FMA loop without the
  // tiles' policy: unmeasured, as are 97..103, taken as 104). n = 104: potrs 16 columns 0.859
  // ms warp, 0.913 block, 32 columns 1.599 / 1.555; trsm 32 columns 0.753 / 0.944;
  // n = 128, 32 columns: potrs 1.644 / 1.854, trsm 0.777 / 1.058. Only measured batches
  // (4,096 systems and more) and the default kernels take the new choices: with
  // BATCHCHOL_TRSM_MMA=0 / BATCHCHOL_TRSM_L2FIRST=0 or fewer systems, block from 16
  // columns for potrs and 17 for trsm, as before.
  if (block_ok && n > 16) {
    int64_t min_k = n > 96   ? ((is_double && !potrs) ? 17 : 16)
                    : n > 64 ? ((potrs || !is_double) ? 8 : 16)
                             : (potrs ? 4 : 8);
    // Float32 trsm at n = 33..64 with up to 8 columns on the warp solves since their tiles
    // come by cp.async (thirty-fourth round, H100, results/h100-2026-11-27-diagmma-
    // crossover-tune_trsm.txt, part 3, warp / block ms): n = 40 0.191 / 0.247 with 8
    // columns, 0.271 / 0.278 with 16, 0.500 / 0.463 with 32; n = 64 0.085 / 0.105, 0.111 /
    // 0.111, 0.181 / 0.166. Not 9-15 columns: one 16-column group, whose float32 tiles
    // keep the register stage (launch_trsm_typed), and the block kernels win there
    // (thirty-fifth round, results/h100-2026-11-27-f32-solves-tune_trsm.txt part 2, 12
    // columns: n = 40 0.332 / 0.292, 48 0.273 / 0.246, 64 0.135 / 0.122).
    if (!is_double && !potrs && n > 32 && n <= 64 && batch >= 4096 &&
        cuda::trsm_full_tiles_enabled() && cuda::trsm_async32_enabled())
      min_k = 9;
    const bool f64_warp = is_double && batch >= 4096 && cuda::trsm_mma_enabled() &&
                          cuda::trsm_l2_first_enabled();
    if (f64_warp && n > 96) min_k = (k == 32 && (!potrs || n > 112)) ? 33 : 17;
    // Since the MMA path's diagonal blocks run on the MMAs too (thirty-fourth round, H100,
    // results/h100-2026-11-27-diagmma-crossover-tune_trsm.txt, warp / block ms,
    // bench_fixed's batches): warp up to 16 columns and with 32 for trsm from n = 33 and
    // potrs from 49 (at n = 97..112 potrs with 32 too). trsm n = 40 with 8 / 16 / 32
    // columns 0.155 / 0.173, 0.193 / 0.245, 0.355 / 0.434; n = 80 0.179 / 0.278, 0.226 /
    // 0.338, 0.355 / 0.607. potrs n = 64 0.186 / 0.190, 0.239 / 0.252, 0.399 / 0.427; n =
    // 96 0.366 / 0.467, 0.451 / 0.609, 0.702 / 1.137; n = 112 with 32 1.021 / 1.651; potrs
    // n = 40 still on block from 8 columns (0.261 / 0.232, 0.338 / 0.319, 0.625 / 0.559), n
    // = 48 within 4%. trsm 33..39 unmeasured. 17-31 columns (a 16-column group and a
    // narrower one, two launches) unmeasured: block, as before, and past 32.
    if (f64_warp && cuda::trsm_diag_mma_enabled() && (potrs ? n > 48 : n > 32))
      min_k = (k == 32) ? 33 : 17;
    // Float32 trsm from n = 96 and potrs past 120 since the warp solves stage full tiles
    // without per-entry tests (thirty-third round, H100,
    // results/h100-2026-11-27-full-tiles-crossover-tune_trsm.txt, warp / block ms): warp
    // up to 32 columns. trsm n = 96 with 8 / 16 / 32 columns 0.169 / 0.180, 0.212 /
    // 0.227, 0.343 / 0.392; n = 128 0.243 / 0.339, 0.299 / 0.355, 0.487 / 0.599 (at 72
    // block: 0.140 / 0.165 with 8). potrs n = 128 0.441 / 0.480, 0.619 / 0.628, 1.088 /
    // 1.142, while at 112 block still won (0.421 / 0.440, 0.546 / 0.607, 1.023 / 1.090);
    // 113..127 unmeasured, split at 120. Measured at 10,000 systems, so from 4,096 as
    // for float64.
    // Float32 potrs from n = 73 and trsm from 65 (up to 16 columns and with 32) since the
    // warp solves copy their tiles by cp.async (thirty-fourth round, the same tune): potrs
    // n = 80 0.227 / 0.218 with 8 columns, 0.298 / 0.316 with 16, 0.533 / 0.596 with 32; n
    // = 96 0.254 / 0.257, 0.320 / 0.378, 0.557 / 0.708; n = 112 0.384 / 0.430, 0.491 /
    // 0.559, 0.854 / 1.034; trsm n = 80 0.136 / 0.149, 0.168 / 0.190, 0.285 / 0.339; at n =
    // 64 block (potrs 0.141 / 0.131, 0.182 / 0.170, 0.318 / 0.278; trsm 32 columns 0.185 /
    // 0.171). 65..79 unmeasured, potrs split at 72; 17-31 columns there unmeasured: block,
    // as before.
    const bool f32_warp = !is_double && batch >= 4096 && cuda::trsm_full_tiles_enabled();
    if (f32_warp && (potrs ? n > 120 : n >= 96)) {
      min_k = 33;
    } else if (f32_warp && cuda::trsm_async32_enabled() && (potrs ? n > 72 : n > 64)) {
      min_k = (k == 32) ? 33 : 17;
    }
    const bool cols_win = n <= 32 && !is_double && (!potrs || k >= 16);
    if (k >= min_k && !cols_win) return TrsmKernel::kBlock;
  }
  // Past n = 128 a few systems (up to ~2 blocks per SM) run the panel kernels, more the
  // warp-per-system ones (trsm_panel_kernels.cuh: panel_wide_blocks).
  if (!is_complex && n > cuda::kBlockMaxOrder &&
      (is_double ? cuda::panel_preferred(n, k, batch, (const double*)nullptr)
                 : cuda::panel_preferred(n, k, batch, (const float*)nullptr)))
    return TrsmKernel::kPanel;
  // benchmarks/results/h100-2026-11-22-cols-tune_trsm.txt: the column kernels win every
  // measured point up to n = 16 (1 to 16 columns), and at n = 32 with 16 columns
  // (potrs float64: 0.31 ms against 0.77 warp); at n = 32 with 1 to 4 columns too few
  // lanes are busy and warp-per-system wins (potrs float64, 4 columns: 0.20 vs 0.30).
  if (cols_ok && (n <= 16 || k >= 8)) return TrsmKernel::kColumns;
  return n <= 8 || (n <= 16 && k <= 2) ? TrsmKernel::kStream : TrsmKernel::kWarp;
}

int trsm_max_columns_per_warp(int64_t /*n*/, int64_t /*k*/, bool /*is_double*/) {
  if (const char* env = std::getenv("BATCHCHOL_TRSM_MAX_CPW")) return std::atoi(env);
  return 0;
}

void launch_trsm(const at::Tensor& A, int64_t a_stride, const at::Tensor& B, at::Tensor& X,
                 bool upper, bool left, bool transpose, bool unit_diagonal, bool a_transposed) {
  TORCH_CHECK(A.dim() == 3 && B.dim() == 3 && X.sizes() == B.sizes(),
              "batchchol.launch_trsm: expected A [batch_a, n, n], B and X [batch, r, c]");
  TORCH_CHECK(A.is_contiguous() && B.is_contiguous() && X.is_contiguous(),
              "batchchol.launch_trsm: tensors must be contiguous");
  const int64_t n = A.size(-1);
  const int64_t batch = B.size(0);
  const int64_t k = left ? B.size(2) : B.size(1);
  TORCH_CHECK((left ? B.size(1) : B.size(2)) == n, "batchchol.launch_trsm: B does not match A");
  TORCH_CHECK(n < (int64_t(1) << 30), "batchchol.launch_trsm: n too large");
  if (batch == 0 || n == 0 || k == 0) return;
  const at::cuda::OptionalCUDAGuard guard(device_of(A));
  TrsmView v = cuda::trsm_view(n, k, upper, left, transpose, unit_diagonal);
  // M(i, j) reads A[r][c] as stored transposed: the other orientation of the buffer.
  if (a_transposed) v.trans = !v.trans;
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES(A.scalar_type(), "batchchol_trsm_cuda", [&] {
    launch_trsm_typed<scalar_t>(A.const_data_ptr<scalar_t>(), a_stride,
                                B.const_data_ptr<scalar_t>(), X.mutable_data_ptr<scalar_t>(),
                                batch, k, v);
  });
}

at::Tensor trsm_cuda(const at::Tensor& A, const at::Tensor& B, bool upper, bool left,
                     bool transpose, bool unit_diagonal) {
  check_solve_op(kTrsm, "A", A, "B", B, left);
  const at::cuda::OptionalCUDAGuard guard(device_of(A));
  auto s = make_solve_batch(A, B, /*allow_transposed=*/true);
  auto X = at::empty(s.out_shape, B.options().memory_format(at::MemoryFormat::Contiguous));
  if (s.batch == 0 || s.n == 0 || s.rows == 0 || s.cols == 0) return X;
  if (cuda::solve_single_applies(s.batch, s.n))
    return trsm_single(A, B, upper, left, transpose, unit_diagonal);
  auto Xflat = view_batch(X, s.batch, s.rows, s.cols);
  launch_trsm(s.A, s.a_stride, s.B, Xflat, upper, left, transpose, unit_diagonal,
              s.a_transposed);
  return X;
}

TORCH_LIBRARY_IMPL(batchchol, CUDA, m) { m.impl("trsm", &trsm_cuda); }

}  // namespace batchchol
