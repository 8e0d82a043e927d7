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

// The largest order the ragged dispatch gives the wide family, by whole tile columns (the
// fixed-size one gives it none: potrf_cuda.cu's choose_potrf_kernel); since the fiftieth
// round its group of 33..64 runs one warp per matrix instead (warp64_ragged.cuh) unless
// BATCHCHOL_RAGGED_WARP64=0. Float32 97..128 run
// on tile4 instead since the forty-first round (H200, tools/ab_env.py,
// results/h200-2026-11-28-ragged-tile4-ab.txt: uniform max_n 128, 50,000 matrices 3.19 ->
// 2.77 ms) and 65..96 since the forty-seventh, when tile4's float32 blocks were built for
// seven per SM (tile_min_blocks; H200, wide / tile4 for that group, best of 5 rounds,
// results/h200-2026-11-28-round47-tile-min-blocks-ab.txt: uniform max_n 128, 50,000
// matrices 2.972 -> 2.844 ms, gaussian 2.647 -> 2.441, 5,000 0.389 -> 0.382 / 0.362 ->
// 0.338, uniform max_n 96 1.818 -> 1.653; skewed 50,000 0.244 -> 0.194, whose group of
// three tile columns is empty: the wide launch's grid covers the whole batch, the tile
// one's is capped). An earlier run there, from the previous tile builds with wide to the
// final ones: gaussian, skewed and max_n 96 (50,000 matrices) faster too (1.04-1.26x), but
// uniform max_n 128 slower (50,000 2.683 -> 2.785 ms, 5,000 0.334 -> 0.351).
template <typename T>
constexpr int wide_dispatch_max_n() {
  return std::is_same_v<T, float> ? 64 : wide_max_n<T>();
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
