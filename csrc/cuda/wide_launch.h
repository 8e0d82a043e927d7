// Launchers of the wide potrf family (wide_chol.cuh): one matrix per block, one row per
// lane, 33 <= n <= wide_max_n<T>() (float64 64, float32 128).
// Buffers are contiguous [batch, n, n] (or ragged), row-major; L does not alias A.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
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
