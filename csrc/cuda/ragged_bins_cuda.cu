// group_by_tiles (ragged_bins.h): a counting sort of the matrices by tile count, in two
// passes over the sizes. Each block counts (or places) its matrices with shared-memory
// atomics and then reserves its slots with one global atomic per group, so the global
// counters see a few hundred updates rather than one per matrix.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include "cuda/launch_utils.h"
#include "cuda/ragged_bins.h"

namespace batchchol {
namespace cuda {
namespace {

constexpr int kBinThreads = 256;

// The group of matrix b, or -1 when it is not in [lo_n, hi_n] or its metadata is invalid.
__device__ __forceinline__ int tile_group(const int* sizes, const int* status, int64_t b,
                                          int lo_n, int hi_n, int nt_hi) {
  if (status && status[b] != 0) return -1;
  const int n = sizes[b];
  return n >= lo_n && n <= hi_n ? nt_hi - (n + 31) / 32 : -1;
}

__global__ void tile_group_count_kernel(const int* __restrict__ sizes,
                                        const int* __restrict__ status, int64_t count,
                                        int lo_n, int hi_n, int nt_hi, int* __restrict__ counts) {
  __shared__ int local[kMaxTileGroups];
  if (threadIdx.x < kMaxTileGroups) local[threadIdx.x] = 0;
  __syncthreads();
  const int64_t b = int64_t(blockIdx.x) * kBinThreads + threadIdx.x;
  const int g = b < count ? tile_group(sizes, status, b, lo_n, hi_n, nt_hi) : -1;
  if (g >= 0) atomicAdd(&local[g], 1);
  __syncthreads();
  if (threadIdx.x < kMaxTileGroups && local[threadIdx.x] != 0)
    atomicAdd(&counts[threadIdx.x], local[threadIdx.x]);
}

// Group g's slots start at the sum of the counts before it; cursors[g] hands them out.
__global__ void tile_group_place_kernel(const int* __restrict__ sizes,
                                        const int* __restrict__ status, int64_t count,
                                        int lo_n, int hi_n, int nt_hi, int groups,
                                        const int* __restrict__ counts, int* __restrict__ cursors,
                                        int* __restrict__ list) {
  __shared__ int local[kMaxTileGroups];
  __shared__ int base[kMaxTileGroups];
  if (threadIdx.x < kMaxTileGroups) local[threadIdx.x] = 0;
  __syncthreads();
  const int64_t b = int64_t(blockIdx.x) * kBinThreads + threadIdx.x;
  const int g = b < count ? tile_group(sizes, status, b, lo_n, hi_n, nt_hi) : -1;
  const int slot = g >= 0 ? atomicAdd(&local[g], 1) : 0;
  __syncthreads();
  if (threadIdx.x < groups && local[threadIdx.x] != 0) {
    int start = 0;
    for (int h = 0; h < static_cast<int>(threadIdx.x); ++h) start += counts[h];
    base[threadIdx.x] = start + atomicAdd(&cursors[threadIdx.x], local[threadIdx.x]);
  }
  __syncthreads();
  if (g >= 0) list[base[g] + slot] = static_cast<int>(b);
}

}  // namespace

TileGroups group_by_tiles(const RaggedBatch& rb, int lo_n, int hi_n) {
  TORCH_CHECK(lo_n >= 1 && hi_n >= lo_n && (hi_n + 31) / 32 - (lo_n + 31) / 32 < kMaxTileGroups,
              "batchchol: bad tile group range ", lo_n, "..", hi_n);
  TORCH_CHECK(rb.count <= INT32_MAX, "batchchol: ragged batch too large to group");
  TileGroups tg;
  tg.nt_hi = (hi_n + 31) / 32;
  tg.groups = tg.nt_hi - (lo_n + 31) / 32 + 1;
  tg.work = at::empty({2 * kMaxTileGroups + rb.count}, rb.sizes.options().dtype(at::kInt));
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  int* w = tg.work.mutable_data_ptr<int>();
  C10_CUDA_CHECK(cudaMemsetAsync(w, 0, 2 * kMaxTileGroups * sizeof(int), stream));
  if (rb.count == 0) return tg;
  const int* sizes = rb.sizes.const_data_ptr<int>();
  const int* status = rb.status.defined() ? rb.status.const_data_ptr<int>() : nullptr;
  const unsigned grid = ceil_div(rb.count, kBinThreads);
  tile_group_count_kernel<<<grid, kBinThreads, 0, stream>>>(sizes, status, rb.count, lo_n, hi_n,
                                                            tg.nt_hi, w);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  tile_group_place_kernel<<<grid, kBinThreads, 0, stream>>>(
      sizes, status, rb.count, lo_n, hi_n, tg.nt_hi, tg.groups, w, w + kMaxTileGroups,
      w + 2 * kMaxTileGroups);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return tg;
}

}  // namespace cuda
}  // namespace batchchol
