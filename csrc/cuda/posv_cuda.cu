// POSV on CUDA: one fused kernel for n <= 32 (the factorization in registers; the warp
// family for the real dtypes), float32 33..64 (warp64), float64 33..64 (the two-warp wide
// kernel) and float64 65..96 (65..128 without the MMA update) and float32 65..192 (the
// tile family on its unpacked stage; float64 posv_solve only: posv_tile_warps); potrf +
// potrs otherwise (and when A is broadcast over several right-hand-side batches).
// posv_solve runs the same kernels without writing L.
#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <cstdlib>
#include <limits>
#include <type_traits>

#include "common/batching.h"
#include "common/checks.h"
#include "common/ops.h"
#include "cuda/launch_utils.h"
#include "cuda/posv_kernels.cuh"
#include "cuda/potrf_launch.h"
#include "cuda/solve_single.h"
#include "cuda/tile_launch.h"
#include "cuda/trsm_launch.h"
#include "cuda/warp_chol_launch.h"
#include "cuda/wide_launch.h"

namespace batchchol {
namespace cuda {
namespace {

template <typename T, int NP>
bool try_registers(const T* A, const T* B, T* X, T* L, int* info, int64_t batch, int n, int k,
                   bool upper, cudaStream_t stream) {
  constexpr int kPerBlock = 128 / NP;
  const size_t smem = sizeof(T) * kPerBlock * (static_cast<size_t>(n) * smem_pitch(n) +
                                               static_cast<size_t>(n) * k);
  if (smem > max_dynamic_smem()) return false;
  auto kernel = posv_registers_kernel<T, NP>;
  allow_dynamic_smem(kernel, smem);
  kernel<<<ceil_div(batch, kPerBlock), 128, smem, stream>>>(A, B, X, L, info, batch, n, k, upper);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return true;
}

// BATCHCHOL_POSV_FUSED_MAX_K overrides the tables below (tuning; read at every call).
int fused_max_k_or(int table) {
  const char* env = std::getenv("BATCHCHOL_POSV_FUSED_MAX_K");
  return env != nullptr ? std::atoi(env) : table;
}

// Right-hand sides up to which the warp family's fused kernel beats potrf + potrs (every
// sweep but the first column's forward one reads the factor from shared memory; the
// potrs kernels stream many columns per pass). H100 crossovers (benchmarks/tune_posv.py,
// 100,000 systems):
//   n <= 32, since the first column's forward sweep rides along with the factorization
//   (2026-11-25, results/h100-2026-11-25-warp-posv-tune_posv.txt; n = 8, 16, 24, 32):
//   k <= 4 for posv and posv_solve (float64 n = 32 posv k = 2: 0.92 vs 1.15 ms, k = 4:
//   1.08 vs 1.16, k = 8: 1.41 vs 1.17; posv_solve k = 4 0.88 vs 1.16, k = 8 1.24 vs
//   1.17; float64 n = 24 posv k = 4 0.784 vs 0.775, on 16 lanes, before NP = 24
//   moved to 8);
//   float32 n > 32 (2026-11-23, results/h100-2026-11-23-tune_posv.txt): posv never (n =
//   64, k = 1: 3.54 vs 3.43 ms), posv_solve k <= 1 (2.91 vs 3.43 ms).
int posv_fused_max_k(int n, bool writes_L) {
  const int table = n > 32 ? (writes_L ? 0 : 1) : 4;
  return fused_max_k_or(table);
}

// The wide family's fused kernel (two warps per system, wide_solve.cuh) against potrf +
// potrs. The first column is forward-substituted during the factorization; every other
// column costs two sweeps of 32 dependent steps per warp with the factor in shared
// memory, where potrs streams many columns per pass. H100, 100,000 float64 systems, min of
// 3 interleaved rounds (2026-11-24, benchmarks/results/h100-2026-11-24-wide-posv-ab.txt),
// fused / unfused ms at n = 33, 48, 64:
//   posv_solve k = 1: 2.31 / 3.06, 2.79 / 3.86, 3.17 / 4.48; k = 2: 2.85 / 3.12, 3.46 /
//   3.96, 4.01 / 4.59; k = 3: 3.47 / 3.30, 4.18 / 4.18, 4.93 / 4.83;
//   posv (writes L) k = 1: 2.66 / 3.08, 3.46 / 3.87, 4.02 / 4.54; k = 2: 3.26 / 3.13,
//   4.12 / 3.95, 4.84 / 4.57.
int posv_wide_max_k(bool writes_L) {
  return fused_max_k_or(writes_L ? 1 : 2);
}

// The tile family's fused kernel (tile_posv.cu) against tile potrf + potrs: its last warp
// forward-solves every column during the diagonal tiles' chains, one warp per column
// solves backward after the factorization. H200, 20,000 systems, fused / unfused ms
// (benchmarks/tune_posv.py, results/h200-2026-11-28-tile-posv-tune.txt, the second run
// with L written as potrf writes it):
//   posv_solve float64 96 k = 1: 1.500 / 1.785, k = 2: 1.549 / 1.821, k = 4: 2.011 /
//   1.894; float64 128 k = 1: 3.032 / 3.318, k = 2: 3.123 / 3.373, k = 4: 3.708 / 3.495;
//   float32 128 k = 1: 1.717 / 2.258, k = 2: 1.798 / 2.286, k = 4: 2.025 / 2.331;
//   float32 192 k = 1: 4.855 / 5.803, k = 2: 4.958 / 5.809;
//   posv (writes L) float64 96 k = 1: 1.867 / 1.807, 128: 3.698 / 3.340; float32 128 k
//   = 1: 2.124 / 2.269, k = 2: 2.301 / 2.327; float32 192 k = 1: 5.537 / 5.805, k = 2:
//   5.865 / 5.836. In float64 the fused kernel's tail (the last forward and the backward
//   solve, ~0.2 of the time of potrf at 128) outweighs the write and read of L that it
//   saves posv; posv_solve saves the write as well. Float32 posv_solve fuses up to 4
//   columns (H200, same script, results/h200-2026-11-28-tile-posv-f32-k4-tune.txt): 128
//   k = 3: 1.994 / 2.361, k = 4: 2.038 / 2.380; 160: 3.319 / 4.034, 3.549 / 4.038; 192:
//   5.181 / 5.883, 5.685 / 5.875 (5 and more columns not measured).
int posv_tile_max_k(bool writes_L, bool is_double) {
  return fused_max_k_or(writes_L ? (is_double ? 0 : 1) : (is_double ? 2 : 4));
}

}  // namespace

// posv_vbatched (max_n <= 32; ragged_launch.h), against potrf_vbatched + the ragged solve
// kernels, which are slower than the fixed-size potrs kernels: H100, 50,000 matrices of n
// uniform in [1, 32] (tune_posv.py --ragged, 2026-11-23,
// results/h100-2026-11-23-ragged-tune_posv.txt): float32 fused at every k measured (k = 1:
// 0.31 vs 0.41 ms; k = 32: 1.30 vs 1.33); float64 k <= 2 (k = 2: 0.63 vs 0.66; k = 4:
// 0.717 vs 0.706; k = 32: 2.09 vs 1.78).
int posv_vbatched_fused_max_k(bool is_double) {
  return fused_max_k_or(is_double ? 2 : std::numeric_limits<int>::max());
}

namespace {

// A fused kernel for (T, n, k) where one serves: the wide one where posv_fuses_wide says
// (potrf_launch.h: where potrf runs the two-warp wide kernel, forced float32 included,
// with float64's column limit; and float64 33..64, where potrf runs warp64 or tile2),
// the tile one where posv_tile_warps gives warps (posv_tile_max_k's columns), else the
// warp family's.
// L may be null (posv_solve: the factor stays on chip). Returns false, launching nothing,
// otherwise.
template <typename T>
bool launch_posv_family_if_served(const T* A, const T* B, T* X, T* L, int* info,
                                  int64_t batch, int n, int k, bool upper, cudaStream_t stream) {
  if constexpr (wide_max_n<T>() > 0) {
    if (n >= kWideMinN && n <= kPosvWideMaxN && posv_fuses_wide<T>(n)) {
      if (k > posv_wide_max_k(/*writes_L=*/L != nullptr) || batch > INT32_MAX) return false;
      launch_posv_wide(A, B, X, L, info, batch, n, k, upper, stream);
      return true;
    }
  }
  if constexpr (tile_posv_max_n<T>() > 0) {
    if (const int warps = posv_tile_warps<T>(n); warps > 0) {
      if (k > posv_tile_max_k(/*writes_L=*/L != nullptr, std::is_same_v<T, double>) ||
          batch > INT32_MAX ||
          tile_posv_smem_bytes(n, k, sizeof(T)) + 16 > max_dynamic_smem())
        return false;
      launch_posv_tile(A, B, X, L, info, batch, n, k, upper, warps, stream);
      return true;
    }
  }
  if constexpr (warp_posv_max_n<T>() > 0) {
    // Float32 33..35 fuse since the forty-sixth round (they had run potrf + potrs,
    // unmeasured): H200, posv_solve, one column, 100,000 systems, unfused / fused ms 33
    // 1.307 / 1.001, 34 1.313 / 1.029, 35 1.352 / 1.073
    // (results/h200-2026-11-28-round46-wide-width-posv33-ab.txt).
    if (n <= warp_posv_max_n<T>() && k <= posv_fused_max_k(n, /*writes_L=*/L != nullptr)) {
      return launch_posv_warp(A, B, X, L, info, batch, n, k, upper, stream);
    }
  }
  return false;
}

// Returns false when the system does not fit on chip or has too many right-hand sides
// for the fused kernels (the caller falls back to potrf + potrs). Real dtypes use the
// warp or wide family, complex ones the registers kernels of posv_kernels.cuh.
template <typename T>
bool launch_posv_fused(const T* A, const T* B, T* X, T* L, int* info, int64_t batch, int n,
                       int k, bool upper, cudaStream_t stream) {
  if constexpr (warp_chol_max_n<T>() > 0) {
    return launch_posv_family_if_served(A, B, X, L, info, batch, n, k, upper, stream);
  } else {
    if (n <= 2) return try_registers<T, 2>(A, B, X, L, info, batch, n, k, upper, stream);
    if (n <= 4) return try_registers<T, 4>(A, B, X, L, info, batch, n, k, upper, stream);
    if (n <= 8) return try_registers<T, 8>(A, B, X, L, info, batch, n, k, upper, stream);
    if (n <= 16) return try_registers<T, 16>(A, B, X, L, info, batch, n, k, upper, stream);
    if (n <= 32) return try_registers<T, 32>(A, B, X, L, info, batch, n, k, upper, stream);
    // Larger systems: potrf's kernels and the fused potrs kernel (measured faster on an
    // H200 than one block per system with the matrix on chip).
    return false;
  }
}

}  // namespace
}  // namespace cuda

namespace {

// posv and posv_solve: with want_L false, L is undefined on return and the fused kernels
// that can keep the factor on chip never write it (the others use a scratch factor).
std::tuple<at::Tensor, at::Tensor, at::Tensor> posv_cuda_impl(const char* op,
                                                              const at::Tensor& A_in,
                                                              const at::Tensor& B_in, bool upper,
                                                              bool want_L) {
  check_solve_op(op, "A", A_in, "B", B_in, /*left=*/true);
  const c10::cuda::OptionalCUDAGuard guard(A_in.device());
  const SolveBatch sb = make_solve_batch(A_in, B_in);
  // One large system: potrf_cuda and potrs_cuda take it to cuSOLVER (potrf_single.cu,
  // solve_single.cu).
  if (!sb.a_per_system || sb.batch > INT32_MAX || sb.cols > INT32_MAX ||
      cuda::solve_single_applies(sb.batch, sb.n)) {
    auto [L, info] = potrf_cuda(A_in, upper);
    return {potrs_cuda(L, B_in, upper), want_L ? L : at::Tensor(), info};
  }
  const auto new_factor = [&] {
    return at::empty(A_in.sizes(), A_in.options().memory_format(at::MemoryFormat::Contiguous));
  };
  at::Tensor L = want_L ? new_factor() : at::Tensor();
  std::vector<int64_t> batch_shape(A_in.sizes().begin(), A_in.sizes().end() - 2);
  at::Tensor info = at::empty(batch_shape, A_in.options().dtype(at::kInt));
  at::Tensor X = at::empty(sb.out_shape, B_in.options().memory_format(at::MemoryFormat::Contiguous));
  if (sb.batch == 0 || sb.n == 0) {
    info.zero_();
    return {X, L, info};
  }
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES(sb.A.scalar_type(), "batchchol_posv_cuda", [&] {
    const scalar_t* a = sb.A.const_data_ptr<scalar_t>();
    int* inf = info.mutable_data_ptr<int>();
    const int n = static_cast<int>(sb.n);
    const scalar_t* b = sb.B.const_data_ptr<scalar_t>();
    scalar_t* x = X.mutable_data_ptr<scalar_t>();
    const int k = static_cast<int>(sb.cols);
    if (!want_L && k > 0 &&
        cuda::launch_posv_family_if_served<scalar_t>(a, b, x, nullptr, inf, sb.batch, n, k,
                                                     upper, stream)) {
      return;
    }
    if (!L.defined()) L = new_factor();  // scratch for the kernels that write the factor
    scalar_t* l = L.mutable_data_ptr<scalar_t>();
    if (k == 0) return cuda::launch_potrf<scalar_t>(a, l, inf, sb.batch, n, upper, stream);
    if (cuda::launch_posv_fused<scalar_t>(a, b, x, l, inf, sb.batch, n, k, upper, stream)) return;
    cuda::launch_potrf<scalar_t>(a, l, inf, sb.batch, n, upper, stream);
    at::Tensor X_flat = view_batch(X, sb.batch, sb.n, sb.cols);
    launch_potrs(view_batch(L, sb.batch, sb.n, sb.n), sb.n * sb.n, sb.B, X_flat, upper);
  });
  return {X, want_L ? L : at::Tensor(), info};
}

}  // namespace

std::tuple<at::Tensor, at::Tensor, at::Tensor> posv_cuda(const at::Tensor& A,
                                                         const at::Tensor& B, bool upper) {
  return posv_cuda_impl(kPosv, A, B, upper, /*want_L=*/true);
}

std::tuple<at::Tensor, at::Tensor> posv_solve_cuda(const at::Tensor& A, const at::Tensor& B,
                                                   bool upper) {
  auto [X, L, info] = posv_cuda_impl(kPosvSolve, A, B, upper, /*want_L=*/false);
  return {X, info};
}

TORCH_LIBRARY_IMPL(batchchol, CUDA, m) {
  m.impl("posv", &posv_cuda);
  m.impl("posv_solve", &posv_solve_cuda);
}

}  // namespace batchchol
