// Device routines of the grouping by size class (ragged_bins.h): the group of a matrix
// and the block-aggregated count and placement passes, shared by group_by_size's kernels
// (ragged_bins_cuda.cu) and the fused prologue's settle phase (ragged_prologue_device.cuh).
// Each thread block counts (or places) its matrices with shared-memory atomics and then
// reserves its slots with one global atomic per group, so the global counters see a few
// hundred updates rather than one per matrix.
#pragma once

#include <cstdint>

#include "cuda/ragged_bins.h"
#include "cuda/warp_chol_launch.h"

namespace batchchol {
namespace cuda {

static_assert(kMaxSizeGroups == kMaxTileGroups + kWarpOrderClasses,
              "the grouping holds the tile counts and every warp order class");

// The group of a valid size n, or -1 when no group takes it.
__device__ __forceinline__ int size_group(const SizeKey& key, int n) {
  if (n >= 1 && n <= key.warp_hi) return key.tile_groups + warp_order_class(n);
  return n >= key.lo_n && n <= key.hi_n ? key.nt_hi - (n + 31) / 32 : -1;
}

// The group of matrix b (-1 for none) from its status code and order; with `info`,
// writes the info of a matrix that no group takes and no other launch serves: invalid
// metadata (its code) or n = 0.
__device__ __forceinline__ int group_of(const SizeKey& key, int32_t code, int n, int64_t b,
                                        int* info) {
  if (code != 0) {
    if (info) info[b] = code;
    return -1;
  }
  if (info && n == 0) info[b] = 0;
  return size_group(key, n);
}

// Adds each thread's matrix (group g; -1: none) to counts, one global atomic per group
// and thread block. Called by every thread of the block; blockDim.x >= kMaxSizeGroups.
__device__ __forceinline__ void count_groups(int g, int* __restrict__ counts) {
  __shared__ int local[kMaxSizeGroups];
  if (threadIdx.x < kMaxSizeGroups) local[threadIdx.x] = 0;
  __syncthreads();
  if (g >= 0) atomicAdd(&local[g], 1);
  __syncthreads();
  if (threadIdx.x < kMaxSizeGroups && local[threadIdx.x] != 0)
    atomicAdd(&counts[threadIdx.x], local[threadIdx.x]);
}

// Writes each thread's matrix index b into a slot of its group g (-1: none). stride > 0
// (one pass, SizeGroups::stride): group g's entries start at list[g * stride], its count
// doubling as the cursor that hands out its slots. stride = 0 (after count_groups): group
// g starts at the sum of the counts before it and cursors[g] hands out its slots. Called
// by every thread of the block; blockDim.x >= kMaxSizeGroups.
__device__ __forceinline__ void place_groups(int g, int64_t b, int groups, int stride,
                                             int* __restrict__ counts, int* __restrict__ cursors,
                                             int* __restrict__ list) {
  __shared__ int local[kMaxSizeGroups];
  __shared__ int base[kMaxSizeGroups];
  if (threadIdx.x < kMaxSizeGroups) local[threadIdx.x] = 0;
  __syncthreads();
  const int slot = g >= 0 ? atomicAdd(&local[g], 1) : 0;
  __syncthreads();
  const int t = threadIdx.x;
  if (t < groups && local[t] != 0) {
    if (stride > 0) {
      base[t] = atomicAdd(&counts[t], local[t]);
    } else {
      int start = 0;
      for (int h = 0; h < t; ++h) start += counts[h];
      base[t] = start + atomicAdd(&cursors[t], local[t]);
    }
  }
  __syncthreads();
  if (g >= 0) list[int64_t(g) * stride + base[g] + slot] = static_cast<int>(b);
}

}  // namespace cuda
}  // namespace batchchol
