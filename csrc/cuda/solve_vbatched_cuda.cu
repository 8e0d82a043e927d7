// potrs_vbatched, posv_vbatched and trsm_vbatched on CUDA: left solves of real types
// whose systems are all small go to the column-per-lane kernels (trsm_cols_kernels.cuh,
// one lane per right-hand side, several systems per warp), the others to the
// warp-per-system kernels with per-system sizes (trsm_ragged_kernels.cuh); posv factors with
// potrf_vbatched's kernels first, except where the warp family factors and solves in
// one pass (max_n <= 32, potrf_vbatched_cuda.cu).
#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <climits>
#include <cstdlib>
#include <cstring>

#include "common/ops_vbatched.h"
#include "common/ragged.h"
#include "cuda/launch_utils.h"
#include "cuda/ragged_launch.h"
#include "cuda/trsm_cols_launch.h"
#include "cuda/trsm_ragged_kernels.cuh"

namespace batchchol {
namespace cuda {

namespace {

// Whether the column-per-lane kernels take a ragged left solve: every system of order
// up to 16 (kColsRaggedMaxOrder), any number of columns. Their cost is set by the
// padded order, not by each system's: up to 32 from 8 columns (the fixed-size rule)
// they lost to the warp-per-system kernels by up to 1.5x on batches of mostly tiny
// systems (H100, results/h100-2026-11-24-ragged-solves-cols32-bench_vbatched_solves.txt,
// skewed Nmax = 32), and splitting a batch at order 16 between both families (in turn
// or on two streams) was 1.35-1.5x faster for 50,000 mostly small systems with one
// column but up to 26% slower elsewhere (results/h100-2026-11-24-ragged-cols-split-ab.txt):
// they take whole batches only.
// BATCHCHOL_RAGGED_SOLVE_KERNEL=warp (a tuning switch read at every call) keeps every
// batch on the warp-per-system kernels.
bool ragged_cols_take_all(int64_t max_n, int64_t k, bool left) {
  const char* forced = std::getenv("BATCHCHOL_RAGGED_SOLVE_KERNEL");
  if (forced != nullptr) {
    TORCH_CHECK(std::strcmp(forced, "warp") == 0,
                "batchchol: BATCHCHOL_RAGGED_SOLVE_KERNEL must be 'warp' (or unset)");
    return false;
  }
  return left && k >= 1 && k <= INT_MAX && max_n >= 1 && max_n <= kColsRaggedMaxOrder;
}

// BATCHCHOL_RAGGED_ASYNC=0 (an A/B switch read at every call): the warp-per-system
// ragged solves on the FMA loop stage their tiles through registers, as they did before
// the fixed-size launchers' cp.async rule reached them (the MMA groups keep cp.async, as
// the fixed-size ones always do).
bool ragged_async_tiles_enabled() { return trsm_switch_on("BATCHCHOL_RAGGED_ASYNC"); }

// BATCHCHOL_RAGGED_MMA=0 (an A/B switch read at every call): the float64 column groups that
// the ragged solves run on the MMAs (launch_solve_typed) on the FMA loop instead
// (BATCHCHOL_TRSM_MMA=0 does it for every warp solve).
bool ragged_mma_enabled() { return trsm_switch_on("BATCHCHOL_RAGGED_MMA"); }

template <typename T>
void launch_solve_typed(const T* A, const T* B, T* X, const RaggedBatch& rb, int64_t k,
                        bool potrs, const TrsmView& v1, const TrsmView& v2, bool left) {
  const auto stream = at::cuda::getCurrentCUDAStream();
  RaggedSolveParams p{};
  p.count = rb.count;
  p.a_offsets = rb.offsets.const_data_ptr<int64_t>();
  p.b_offsets = rb.b_offsets.const_data_ptr<int64_t>();
  p.sizes = rb.sizes.const_data_ptr<int>();
  p.status = rb.status.defined() ? rb.status.const_data_ptr<int>() : nullptr;
  p.rhs_status = rb.rhs_status.defined() ? rb.rhs_status.const_data_ptr<int>() : nullptr;
  p.k = static_cast<int>(k);
  p.left = left;
  if constexpr (!IsComplex<T>::value) {
    if (ragged_cols_take_all(rb.max_n, k, left)) {
      const RaggedCols r{p.count, p.a_offsets, p.b_offsets, p.sizes, p.status, p.rhs_status};
      if (potrs) {
        launch_potrs_cols_ragged(A, B, X, r, k, int(rb.max_n), v1, v2, stream);
      } else {
        launch_trsm_cols_ragged(A, B, X, r, k, int(rb.max_n), v1, stream);
      }
      return;
    }
  }
  const int64_t max_k = k < 0 ? rb.max_n : k;
  const bool async = ragged_async_tiles_enabled() && trsm_async_dtype<T>();
  trsm_split_columns<T>(max_k, [&](auto cpw, int64_t col_begin, int64_t col_end) {
    constexpr int CPW = decltype(cpw)::value;
    // The tiles by cp.async (trsm_tile_start) below 16 columns, as the fixed-size trsm
    // takes them on the FMA loop (float32 trsm with one column up to n = 256 keeps the
    // register stage there too). H100, one build, on / off
    // (results/h100-2026-11-27-ragged-async-ab-bench_vbatched_solves.txt): potrs uniform
    // Nmax = 128, 50,000 float64 systems, 1 / 8 columns 1.107 / 1.379 and 1.837 / 2.293
    // ms, Nmax = 512, 5,000 systems, 1 column float64 1.954 / 2.410, float32 1.122 /
    // 1.363; trsm float64 8 columns 0.934 / 1.141; but potrs float64 16 columns 3.136 /
    // 2.910 (Nmax = 128, 50,000).
    TrsmView w1 = v1, w2 = v2;
    const bool f32_column = !potrs && sizeof(T) == 4 && CPW == 1 && rb.max_n <= 256;
    w1.async_tiles = w2.async_tiles = async && CPW < 16 && !f32_column;
    p.col_begin = static_cast<int>(col_begin);
    p.col_end = static_cast<int>(col_end);
    p.groups = static_cast<int>((col_end - col_begin + CPW - 1) / CPW);
    const int64_t blocks = (p.count * p.groups + kTrsmWarps - 1) / kTrsmWarps;
    TORCH_CHECK(blocks <= INT_MAX, "batchchol: ragged batch too large for one launch");
    const auto run = [&](auto mma) {
      constexpr bool kMma = decltype(mma)::value;
      // The MMA path takes its tiles by cp.async, as the fixed-size launchers give it.
      if constexpr (kMma) w1.async_tiles = w2.async_tiles = true;
      const size_t smem = kTrsmWarps * trsm_warp_smem_bytes<T, CPW, kMma>();
      auto launch = [&](auto kernel) {
        allow_dynamic_smem(kernel, smem);
        // The fixed-size solves' Y-keep rule (trsm_y_keep: float64 groups of 8+ columns),
        // with the batch's warps and the kernel's residency.
        w1.y_keep = w2.y_keep = trsm_y_keep<T>(p.count * p.groups, CPW, [&] {
          return resident_per_sm_cached(kernel, kTrsmWarps * 32, smem);
        });
        kernel<<<unsigned(blocks), kTrsmWarps * 32, smem, stream>>>(A, B, X, w1, w2, p);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
      };
      if constexpr (kMma) {
        if (potrs) {
          launch(solve_ragged_mma_kernel<T, CPW, true>);
        } else {
          launch(solve_ragged_mma_kernel<T, CPW, false>);
        }
      } else if (potrs) {
        launch(solve_ragged_kernel<T, CPW, true>);
      } else {
        launch(solve_ragged_kernel<T, CPW, false>);
      }
    };
    // On the MMAs: 16-column groups, and 8-column ones past max_n = 128. H100, float64,
    // one build, MMA / FMA loop (results/h100-2026-11-27-ragged-mma-ab-bench_vbatched_solves.txt,
    // ms): uniform Nmax = 128, 50,000 systems, 16 columns potrs 2.607 / 2.942, trsm 1.156
    // / 1.469; Nmax = 512, 5,000 systems, 8 columns potrs 2.032 / 2.709, 16 columns 2.581
    // / 3.637; but 8 columns at Nmax = 128, 50,000 systems, potrs 2.122 / 1.842 (uniform),
    // trsm 0.198 / 0.170 (skewed). Orders between 128 and 512 were not measured.
    if (ragged_mma_enabled() && (CPW == 16 || rb.max_n > 128)) {
      with_trsm_mma<T, CPW>(run);
    } else {
      run(std::false_type{});
    }
  });
}

}  // namespace

void launch_solve_ragged(const at::Tensor& A, const at::Tensor& B, at::Tensor& X,
                         const RaggedBatch& rb, int64_t k, bool potrs, bool upper, bool left,
                         bool transpose, bool unit_diagonal) {
  if (rb.count == 0 || k == 0 || rb.max_n == 0) return;
  TORCH_CHECK(k <= INT_MAX, "batchchol: too many right-hand sides");
  // The views' n, rs and cs are set per system by the kernel. potrs: L Y = B then
  // L^H X = Y (upper: U^H Y = B, U X = Y), as in potrs_cuda.
  const TrsmView v1 = potrs ? trsm_view(0, 0, upper, true, /*transpose=*/upper, false)
                            : trsm_view(0, 0, upper, left, transpose, unit_diagonal);
  const TrsmView v2 = potrs ? trsm_view(0, 0, upper, true, /*transpose=*/!upper, false) : v1;
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES(A.scalar_type(), "batchchol_solve_vbatched_cuda", [&] {
    launch_solve_typed<scalar_t>(A.const_data_ptr<scalar_t>(), B.const_data_ptr<scalar_t>(),
                                 X.mutable_data_ptr<scalar_t>(), rb, k, potrs, v1, v2,
                                 potrs || left);
  });
}

}  // namespace cuda

at::Tensor potrs_vbatched_cuda(const at::Tensor& L, const at::Tensor& n, const at::Tensor& offsets,
                               const at::Tensor& B, const at::Tensor& b_offsets, int64_t k,
                               c10::optional<int64_t> max_n, bool upper) {
  const RaggedBatch rb =
      prepare_ragged_solve(kPotrsV, "L", L, n, offsets, B, b_offsets, k, max_n, /*left=*/true);
  const c10::cuda::OptionalCUDAGuard guard(L.device());
  const at::Tensor Lc = L.contiguous(), Bc = B.contiguous();
  at::Tensor X = cuda::zeroed_like(Bc);
  cuda::launch_solve_ragged(Lc, Bc, X, rb, k, /*potrs=*/true, upper, true, false, false);
  return X;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> posv_vbatched_cuda(
    const at::Tensor& A, const at::Tensor& n, const at::Tensor& offsets, const at::Tensor& B,
    const at::Tensor& b_offsets, int64_t k, c10::optional<int64_t> max_n, bool upper) {
  check_ragged_matrices(kPosvV, "A", A, n, offsets);
  check_ragged_rhs(kPosvV, A, n, "B", B, b_offsets, k);
  const RaggedRhs rhs{B, b_offsets, rhs_block_shape(k, /*left=*/true)};
  if (cuda::ragged_prologue_applies(n, offsets, &b_offsets, max_n)) {
    check_ragged_max_n(kPosvV, *max_n);
    const c10::cuda::OptionalCUDAGuard guard(A.device());
    const at::Tensor Ac = A.contiguous(), Bc = B.contiguous();
    const cuda::GroupPlan plan = cuda::potrf_group_plan(A.scalar_type(), *max_n);
    cuda::RaggedPrologue p = cuda::ragged_prologue(kPosvV, Ac, n, offsets, *max_n, &rhs, plan);
    at::Tensor X = cuda::zeroed_like(Bc);
    const cuda::SizeGroups* sg = plan.grouped ? &p.sg : nullptr;
    if (!cuda::launch_posv_ragged_fused(Ac, Bc, X, p.L, p.info, p.rb, k, upper, sg)) {
      cuda::launch_potrf_ragged(Ac, p.L, p.info, p.rb, upper, sg);
      cuda::launch_solve_ragged(p.L, Bc, X, p.rb, k, /*potrs=*/true, upper, true, false, false);
    }
    return {X, p.L, p.info};
  }
  const RaggedBatch rb = prepare_ragged(kPosvV, A, n, offsets, max_n, &rhs);
  const c10::cuda::OptionalCUDAGuard guard(A.device());
  const at::Tensor Ac = A.contiguous(), Bc = B.contiguous();
  at::Tensor L = cuda::ragged_matrix_output(Ac, rb);
  at::Tensor X = cuda::zeroed_like(Bc);
  at::Tensor info = at::empty({rb.count}, A.options().dtype(at::kInt));
  if (cuda::launch_posv_ragged_fused(Ac, Bc, X, L, info, rb, k, upper)) return {X, L, info};
  cuda::launch_potrf_ragged(Ac, L, info, rb, upper);
  cuda::launch_solve_ragged(L, Bc, X, rb, k, /*potrs=*/true, upper, true, false, false);
  return {X, L, info};
}

at::Tensor trsm_vbatched_cuda(const at::Tensor& A, const at::Tensor& n, const at::Tensor& offsets,
                              const at::Tensor& B, const at::Tensor& b_offsets, int64_t k,
                              c10::optional<int64_t> max_n, bool upper, bool left, bool transpose,
                              bool unit_diagonal) {
  const RaggedBatch rb =
      prepare_ragged_solve(kTrsmV, "A", A, n, offsets, B, b_offsets, k, max_n, left);
  const c10::cuda::OptionalCUDAGuard guard(A.device());
  const at::Tensor Ac = A.contiguous(), Bc = B.contiguous();
  at::Tensor X = cuda::zeroed_like(Bc);
  cuda::launch_solve_ragged(Ac, Bc, X, rb, k, /*potrs=*/false, upper, left, transpose,
                            unit_diagonal);
  return X;
}

TORCH_LIBRARY_IMPL(batchchol, CUDA, m) {
  m.impl("potrs_vbatched", &potrs_vbatched_cuda);
  m.impl("posv_vbatched", &posv_vbatched_cuda);
  m.impl("trsm_vbatched", &trsm_vbatched_cuda);
}

}  // namespace batchchol
