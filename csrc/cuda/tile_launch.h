// Launchers of the tile potrf family (tile_chol.cuh): one matrix per block, its lower
// triangle in shared memory as 32 x 32 tiles; real types, n <= tile_max_n<T>().
// Buffers are contiguous [batch, n, n] (or ragged), row-major; L does not alias A.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace batchchol {
struct RaggedBatch;
namespace cuda {
struct SizeGroups;

// The packed triangle plus one tile of scratch must fit the 227 KB a block can opt
// into on sm_90: 10 x 10 tiles in float32, 6 x 6 in float64.
template <typename T>
constexpr int tile_max_n() {
  return std::is_same_v<T, float> ? 320 : std::is_same_v<T, double> ? 192 : 0;
}

// Warps per block for order n: 8 while two blocks fit an SM (float32 n <= 192, float64
// n <= 128), 16 beyond (H100 tuning, potrf_cuda.cu); the fixed-size and ragged
// dispatches both take it from here.
template <typename T>
constexpr int tile_warps(int n) {
  return n <= (std::is_same_v<T, float> ? 192 : 128) ? 8 : 16;
}

// Whether the tiles of order n fit the shared memory a block of the current device may
// opt into.
bool tile_fits(int n, size_t elem_size);

// Whether the tile families' float64 trailing updates run on the MMAs: on sm_80 and later
// (the current device), unless BATCHCHOL_TILE_MMA is 0 (an A/B switch, read at every
// call). The size dispatch gives tile16 its float64 orders 145..160 only then.
bool tile_float64_mma();

// warps: 8 or 16 warps per block.
void launch_potrf_tile(const float* A, float* L, int* info, int64_t batch, int n, bool upper,
                       int warps, cudaStream_t stream);
void launch_potrf_tile(const double* A, double* L, int* info, int64_t batch, int n, bool upper,
                       int warps, cudaStream_t stream);

// Ragged batches: the matrices of groups [g_lo, g_hi] of tg (ragged_bins.h), in one
// launch sized for group g_lo's tile count; their info entries are written, nothing
// else of the batch is touched.
void launch_potrf_tile_groups(const float* A, float* L, int* info, const RaggedBatch& rb,
                              const SizeGroups& tg, int g_lo, int g_hi, bool upper, int warps,
                              cudaStream_t stream);
void launch_potrf_tile_groups(const double* A, double* L, int* info, const RaggedBatch& rb,
                              const SizeGroups& tg, int g_lo, int g_hi, bool upper, int warps,
                              cudaStream_t stream);

}  // namespace cuda
}  // namespace batchchol
