// Launchers of the wide potrf family (wide_chol.cuh): one matrix per block, one row per
// lane, 33 <= n <= wide_max_n<T>() (float64 64, float32 128).
// Buffers are contiguous [batch, n, n] (or ragged), row-major; L does not alias A.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>
#include <type_traits>

namespace batchchol {
struct RaggedBatch;
namespace cuda {
struct SizeGroups;

constexpr int kWideMinN = 33;

template <typename T>
constexpr int wide_max_n() {
  return std::is_same_v<T, float> ? 128 : std::is_same_v<T, double> ? 64 : 0;
}

// The largest order the size dispatches give the wide family, by whole tile columns (the
// ragged dispatch's groups; the fixed-size one stops earlier in float64, at
// wide_fixed_max_n, potrf_cuda.cu): float32 97..128 run on tile4 instead, four blocks of
// four warps per SM (H200, tools/ab_env.py, results/h200-2026-11-28-tile4-ab.txt: 128
// 1.077 -> 0.906 ms; ragged, results/h200-2026-11-28-ragged-tile4-ab.txt: uniform max_n
// 128, 50,000 matrices 3.19 -> 2.77 ms).
template <typename T>
constexpr int wide_dispatch_max_n() {
  return std::is_same_v<T, float> ? 96 : wide_max_n<T>();
}

// Calls f(std::integral_constant<int, C>{}) with the width of the fixed-size kernels of
// NW warps for order n: their rows are updated up to column C - 1 (wide_chol.cuh's
// wide_chain). A row's entries past n are never read, so C = 32 NW - 16 at n <= 32 NW - 16
// (the orders just past a warp's 32 rows) cuts the last warp's updates by a fourth or
// more (NW = 3: 80 + 48 + 16 entries per step against 96 + 64 + 32) with the same bits.
// H200, the full / short width, same bits (results/h200-2026-11-28-round46-wide-width-
// posv33-ab.txt): potrf float32 65 0.476 -> 0.450 ms, 72 0.492 -> 0.462, 80 0.539 ->
// 0.511 (10,000 matrices); the fused posv_solve float64 33 2.211 -> 1.951, 40 2.465 ->
// 2.138, 48 2.856 -> 2.475 (100,000 systems, one column). Two and three warps only: the
// four-warp kernels (float32 97..128, where the size dispatch runs tile4) keep 128.
// BATCHCHOL_WIDE_FULL (tests, tuning; read at every call): 32 NW at every order.
template <int NW, typename F>
void with_wide_width(int n, F&& f) {
  if constexpr (NW < 4) {
    constexpr int kShort = 32 * NW - 16;
    if (n <= kShort && std::getenv("BATCHCHOL_WIDE_FULL") == nullptr) {
      return f(std::integral_constant<int, kShort>{});
    }
  }
  f(std::integral_constant<int, 32 * NW>{});
}

void launch_potrf_wide(const float* A, float* L, int* info, int64_t batch, int n, bool upper,
                       cudaStream_t stream);
void launch_potrf_wide(const double* A, double* L, int* info, int64_t batch, int n, bool upper,
                       cudaStream_t stream);

// Fused posv (wide_solve.cuh), two warps per system (n <= kPosvWideMaxN): B, X [batch,
// n, k]; L may be null (posv_solve), else it receives the factor as launch_potrf_wide
// writes it. Three and four warps (float32 65..128) are not built: at one column they
// tied or lost against potrf + potrs on an H100 (benchmarks/KERNEL-NOTES.md).
constexpr int kPosvWideMaxN = 64;
void launch_posv_wide(const float* A, const float* B, float* X, float* L, int* info,
                      int64_t batch, int n, int k, bool upper, cudaStream_t stream);
void launch_posv_wide(const double* A, const double* B, double* X, double* L, int* info,
                      int64_t batch, int n, int k, bool upper, cudaStream_t stream);

// Ragged batches: the matrices of group g of tg (ragged_bins.h), whose tile count
// (2..wide_max_n / 32) gives the warps per matrix, in one launch; their info
// entries are written, nothing else of the batch is touched.
void launch_potrf_wide_group(const float* A, float* L, int* info, const RaggedBatch& rb,
                             const SizeGroups& tg, int g, bool upper, cudaStream_t stream);
void launch_potrf_wide_group(const double* A, double* L, int* info, const RaggedBatch& rb,
                             const SizeGroups& tg, int g, bool upper, cudaStream_t stream);

}  // namespace cuda
}  // namespace batchchol
