// group_by_size (ragged_bins.h): a counting sort of the matrices by size class, in two
// passes over the sizes (one for small batches without a tile part). Each block counts
// (or places) its matrices with shared-memory atomics and then reserves its slots with
// one global atomic per group, so the global counters see a few hundred updates rather
// than one per matrix.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include "cuda/launch_utils.h"
#include "cuda/ragged_bins.h"
#include "cuda/warp_chol_launch.h"

namespace batchchol {
namespace cuda {
namespace {

constexpr int kBinThreads = 256;
static_assert(kBinThreads >= kMaxSizeGroups, "one thread per group publishes its count");
static_assert(kMaxSizeGroups == kMaxTileGroups + kWarpOrderClasses,
              "the grouping holds the tile counts and every warp order class");

// How sizes map to groups (ragged_bins.h).
struct SizeKey {
  int warp_hi, lo_n, hi_n, nt_hi, tile_groups;
  // The group of a valid size n, or -1 when no group takes it.
  __device__ __forceinline__ int group(int n) const {
    if (n >= 1 && n <= warp_hi) return tile_groups + warp_order_class(n);
    return n >= lo_n && n <= hi_n ? nt_hi - (n + 31) / 32 : -1;
  }
};

// The group of matrix b (-1 for none); with `info`, writes the info of a matrix that
// no group takes and no other launch serves: invalid metadata or n = 0.
__device__ __forceinline__ int matrix_group(const SizeKey& key, const int* sizes,
                                            const int* status, int64_t b, int* info) {
  if (status && status[b] != 0) {
    if (info) info[b] = status[b];
    return -1;
  }
  const int n = sizes[b];
  if (info && n == 0) info[b] = 0;
  return key.group(n);
}

__global__ void size_group_count_kernel(const int* __restrict__ sizes,
                                        const int* __restrict__ status, int64_t count,
                                        SizeKey key, int* __restrict__ counts,
                                        int* __restrict__ info) {
  __shared__ int local[kMaxSizeGroups];
  if (threadIdx.x < kMaxSizeGroups) local[threadIdx.x] = 0;
  __syncthreads();
  const int64_t b = int64_t(blockIdx.x) * kBinThreads + threadIdx.x;
  const int g = b < count ? matrix_group(key, sizes, status, b, info) : -1;
  if (g >= 0) atomicAdd(&local[g], 1);
  __syncthreads();
  if (threadIdx.x < kMaxSizeGroups && local[threadIdx.x] != 0)
    atomicAdd(&counts[threadIdx.x], local[threadIdx.x]);
}

// Writes each matrix's index into its group's slots. stride > 0 (one pass,
// SizeGroups::stride): group g's entries start at list[g * stride], its count doubling
// as the cursor that hands out its slots. stride = 0 (after size_group_count_kernel):
// group g starts at the sum of the counts before it and cursors[g] hands out its slots.
__global__ void size_group_place_kernel(const int* __restrict__ sizes,
                                        const int* __restrict__ status, int64_t count,
                                        SizeKey key, int groups, int stride,
                                        int* __restrict__ counts, int* __restrict__ cursors,
                                        int* __restrict__ list, int* __restrict__ info) {
  __shared__ int local[kMaxSizeGroups];
  __shared__ int base[kMaxSizeGroups];
  if (threadIdx.x < kMaxSizeGroups) local[threadIdx.x] = 0;
  __syncthreads();
  const int64_t b = int64_t(blockIdx.x) * kBinThreads + threadIdx.x;
  const int g = b < count ? matrix_group(key, sizes, status, b, info) : -1;
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

}  // namespace

SizeGroups group_by_size(const RaggedBatch& rb, int warp_hi, int lo_n, int hi_n, int* info) {
  const bool tiles = hi_n >= lo_n;
  const int tile_counts = tile_group_count(lo_n, hi_n);
  TORCH_CHECK(warp_hi >= 0 && warp_hi <= 32 &&
                  (!tiles || (lo_n > warp_hi && tile_counts <= kMaxTileGroups)),
              "batchchol: bad size groups ", warp_hi, ", ", lo_n, "..", hi_n);
  TORCH_CHECK(rb.count <= INT32_MAX, "batchchol: ragged batch too large to group");
  SizeGroups sg;
  if (tiles) {
    sg.nt_hi = (hi_n + 31) / 32;
    sg.groups = tile_counts;
  }
  sg.warp_classes = warp_hi > 0 ? warp_order_class(warp_hi) + 1 : 0;
  const int groups = sg.groups + sg.warp_classes;
  const bool one_pass = !tiles && rb.count <= kOnePassGroupMax;
  if (one_pass) sg.stride = static_cast<int>(rb.count);
  const int64_t list_len = one_pass ? groups * rb.count : rb.count;
  sg.work = at::empty({2 * kMaxSizeGroups + list_len}, rb.sizes.options().dtype(at::kInt));
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  int* w = sg.work.mutable_data_ptr<int>();
  C10_CUDA_CHECK(cudaMemsetAsync(w, 0, 2 * kMaxSizeGroups * sizeof(int), stream));
  if (rb.count == 0) return sg;
  const int* sizes = rb.sizes.const_data_ptr<int>();
  const int* status = rb.status.defined() ? rb.status.const_data_ptr<int>() : nullptr;
  const SizeKey key{warp_hi, tiles ? lo_n : 1, tiles ? hi_n : 0, sg.nt_hi, sg.groups};
  const unsigned grid = ceil_div(rb.count, kBinThreads);
  int* list = w + 2 * kMaxSizeGroups;
  if (!one_pass) {
    size_group_count_kernel<<<grid, kBinThreads, 0, stream>>>(sizes, status, rb.count, key, w,
                                                              info);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  // The count pass already wrote the info of the matrices that no group takes.
  size_group_place_kernel<<<grid, kBinThreads, 0, stream>>>(
      sizes, status, rb.count, key, groups, sg.stride, w, w + kMaxSizeGroups, list,
      one_pass ? info : nullptr);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return sg;
}

}  // namespace cuda
}  // namespace batchchol
