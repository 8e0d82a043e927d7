// group_by_size (ragged_bins.h): a counting sort of the matrices by size class, in two
// passes over the sizes (one for small batches without a tile part), with the
// block-aggregated passes of ragged_bins_device.cuh.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include "cuda/launch_utils.h"
#include "cuda/ragged_bins.h"
#include "cuda/ragged_bins_device.cuh"

namespace batchchol {
namespace cuda {
namespace {

constexpr int kBinThreads = 256;
static_assert(kBinThreads >= kMaxSizeGroups, "one thread per group publishes its count");

// The group of matrix b from the batch's statuses (null: all valid) and sizes.
__device__ __forceinline__ int matrix_group(const SizeKey& key, const int* sizes,
                                            const int* status, int64_t b, int* info) {
  const int32_t code = status ? status[b] : 0;
  return group_of(key, code, code == 0 ? sizes[b] : 0, b, info);
}

__global__ void size_group_count_kernel(const int* __restrict__ sizes,
                                        const int* __restrict__ status, int64_t count,
                                        SizeKey key, int* __restrict__ counts,
                                        int* __restrict__ info) {
  const int64_t b = int64_t(blockIdx.x) * kBinThreads + threadIdx.x;
  count_groups(b < count ? matrix_group(key, sizes, status, b, info) : -1, counts);
}

__global__ void size_group_place_kernel(const int* __restrict__ sizes,
                                        const int* __restrict__ status, int64_t count,
                                        SizeKey key, int groups, int stride,
                                        int* __restrict__ counts, int* __restrict__ cursors,
                                        int* __restrict__ list, int* __restrict__ info) {
  const int64_t b = int64_t(blockIdx.x) * kBinThreads + threadIdx.x;
  const int g = b < count ? matrix_group(key, sizes, status, b, info) : -1;
  place_groups(g, b, groups, stride, counts, cursors, list);
}

void launch_place(const RaggedBatch& rb, const SizeGroups& sg, int* w, int* info,
                  cudaStream_t stream) {
  const int* status = rb.status.defined() ? rb.status.const_data_ptr<int>() : nullptr;
  size_group_place_kernel<<<ceil_div(rb.count, kBinThreads), kBinThreads, 0, stream>>>(
      rb.sizes.const_data_ptr<int>(), status, rb.count, size_key(sg),
      sg.groups + sg.warp_classes, sg.stride, w, w + kMaxSizeGroups, w + 2 * kMaxSizeGroups,
      info);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

SizeGroups size_group_layout(int64_t count, int warp_hi, int lo_n, int hi_n) {
  const bool tiles = hi_n >= lo_n;
  const int tile_counts = tile_group_count(lo_n, hi_n);
  TORCH_CHECK(warp_hi >= 0 && warp_hi <= 32 &&
                  (!tiles || (lo_n > warp_hi && tile_counts <= kMaxTileGroups)),
              "batchchol: bad size groups ", warp_hi, ", ", lo_n, "..", hi_n);
  TORCH_CHECK(count <= INT32_MAX, "batchchol: ragged batch too large to group");
  SizeGroups sg;
  sg.warp_hi = warp_hi;
  sg.lo_n = lo_n;
  sg.hi_n = hi_n;
  if (tiles) {
    sg.nt_hi = (hi_n + 31) / 32;
    sg.groups = tile_counts;
  }
  sg.warp_classes = warp_hi > 0 ? warp_order_class(warp_hi) + 1 : 0;
  if (!tiles && count <= kOnePassGroupMax) sg.stride = static_cast<int>(count);
  return sg;
}

int64_t size_group_words(const SizeGroups& sg, int64_t count) {
  const int64_t list_len = sg.stride > 0 ? (sg.groups + sg.warp_classes) * count : count;
  return 2 * kMaxSizeGroups + list_len;
}

void place_size_groups(const RaggedBatch& rb, const SizeGroups& sg, cudaStream_t stream) {
  TORCH_CHECK(sg.stride == 0, "batchchol: a one-pass grouping has no placement pass");
  if (rb.count == 0) return;
  launch_place(rb, sg, sg.work.mutable_data_ptr<int>() + sg.base, nullptr, stream);
}

SizeGroups group_by_size(const RaggedBatch& rb, int warp_hi, int lo_n, int hi_n, int* info) {
  SizeGroups sg = size_group_layout(rb.count, warp_hi, lo_n, hi_n);
  sg.work = at::empty({size_group_words(sg, rb.count)}, rb.sizes.options().dtype(at::kInt));
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  int* w = sg.work.mutable_data_ptr<int>();
  C10_CUDA_CHECK(cudaMemsetAsync(w, 0, 2 * kMaxSizeGroups * sizeof(int), stream));
  if (rb.count == 0) return sg;
  if (sg.stride == 0) {
    const int* status = rb.status.defined() ? rb.status.const_data_ptr<int>() : nullptr;
    size_group_count_kernel<<<ceil_div(rb.count, kBinThreads), kBinThreads, 0, stream>>>(
        rb.sizes.const_data_ptr<int>(), status, rb.count, size_key(sg), w, info);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  // The count pass already wrote the info of the matrices that no group takes.
  launch_place(rb, sg, w, sg.stride > 0 ? info : nullptr, stream);
  return sg;
}

}  // namespace cuda
}  // namespace batchchol
