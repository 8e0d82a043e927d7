// Device-side validation of ragged metadata (common/ragged.h) in a few kernels.
//
// The tensor-op version in ragged.cpp (sort by offset, gathers, a cummax, scatters: about
// 35 launches per operand) cost ~0.6 ms per call on an H100 and dominated the ragged ops
// for small matrices. Here: one kernel for the size and range checks, one scan (the
// running maxima of earlier blocks' starts and ends), one kernel for the overlap check.
// That check is exact when the live blocks are in offset order (what packing produces);
// it also raises a device flag when they are not, and a last kernel, which returns at
// once while the flag is clear, then redoes the overlap check pairwise: O(count^2) only
// for out-of-order batches, which is why this path serves at most kRaggedFastStatusMax
// blocks (ragged.cpp keeps the sorting version beyond).
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include <cub/device/device_scan.cuh>

#include <climits>
#include <cstdint>

#include "common/ragged.h"
#include "cuda/launch_utils.h"
#include "cuda/ragged_status_launch.h"

namespace batchchol {
namespace cuda {

namespace {

constexpr int kStatusThreads = 256;

// A live block's [start, end); a dead one (empty, or already invalid) has both INT64_MIN,
// so that it never raises a running maximum.
struct alignas(16) Span {
  int64_t start, end;
};

struct SpanMax {
  __device__ __forceinline__ Span operator()(const Span& a, const Span& b) const {
    return {a.start > b.start ? a.start : b.start, a.end > b.end ? a.end : b.end};
  }
};

template <typename IdxT>
__global__ void __launch_bounds__(kStatusThreads)
    block_range_kernel(const IdxT* __restrict__ n, const int64_t* __restrict__ off, int64_t count,
                       int64_t rows, int64_t cols, int64_t numel, int64_t limit,
                       int32_t range_code, int32_t* __restrict__ pre, Span* __restrict__ span,
                       int32_t* __restrict__ clamped) {
  const int64_t i = int64_t(blockIdx.x) * kStatusThreads + threadIdx.x;
  if (i >= count) return;
  const int64_t ni = n[i];
  int32_t st = 0;
  int64_t ext = 0, o = 0;
  if (ni < 0) {
    st = kNegativeSize;
  } else if (ni > limit) {
    st = kSizeAboveMaxN;
  } else {
    ext = (rows == kSizeN ? ni : rows) * (cols == kSizeN ? ni : cols);  // < 2^62
    o = off[i];
    if (o < 0 || ext > numel || o > numel - ext) st = range_code;
  }
  pre[i] = st;
  const bool live = st == 0 && ext > 0;
  span[i] = live ? Span{o, o + ext} : Span{INT64_MIN, INT64_MIN};
  if (clamped) clamped[i] = int32_t(ni < 0 ? 0 : (ni > limit ? limit : ni));
}

// before[i]: the maxima over the blocks j < i. A live block overlaps when it starts
// before an earlier block ends; it is out of order when it starts before an earlier one.
__global__ void __launch_bounds__(kStatusThreads)
    block_overlap_kernel(const int32_t* __restrict__ pre, const Span* __restrict__ span,
                         const Span* __restrict__ before, int64_t count, int32_t overlap_code,
                         int32_t* __restrict__ unordered, int32_t* __restrict__ status) {
  const int64_t i = int64_t(blockIdx.x) * kStatusThreads + threadIdx.x;
  if (i >= count) return;
  const Span s = span[i];
  int32_t st = pre[i];
  if (s.end != INT64_MIN) {
    if (s.start < before[i].start) *unordered = 1;  // every writer writes 1: no atomics
    if (s.start < before[i].end) st = overlap_code;
  }
  status[i] = st;
}

// The overlap check of the sorted sweep, pairwise: block i overlaps when a live block
// that comes before it in (start, index) order ends after i starts.
__global__ void __launch_bounds__(kStatusThreads)
    block_overlap_pairwise_kernel(const Span* __restrict__ span, int64_t count,
                                  int32_t overlap_code, const int32_t* __restrict__ unordered,
                                  int32_t* __restrict__ status) {
  if (*unordered == 0) return;
  __shared__ Span tile[kStatusThreads];
  const int64_t i = int64_t(blockIdx.x) * kStatusThreads + threadIdx.x;
  const Span s = i < count ? span[i] : Span{INT64_MIN, INT64_MIN};
  bool clash = false;
  for (int64_t j0 = 0; j0 < count; j0 += kStatusThreads) {
    __syncthreads();
    const int64_t jl = j0 + threadIdx.x;
    tile[threadIdx.x] = jl < count ? span[jl] : Span{INT64_MIN, INT64_MIN};
    __syncthreads();
    const int m = count - j0 < kStatusThreads ? int(count - j0) : kStatusThreads;
    for (int t = 0; t < m; ++t) {
      const Span o = tile[t];
      const int64_t j = j0 + t;
      clash |= o.end != INT64_MIN && (o.start < s.start || (o.start == s.start && j < i)) &&
               o.end > s.start;
    }
  }
  if (i < count && s.end != INT64_MIN) status[i] = clash ? overlap_code : 0;
}

}  // namespace

at::Tensor block_status_cuda(const at::Tensor& sizes, const at::Tensor& offsets, int64_t rows,
                             int64_t cols, int64_t numel, int64_t limit, int32_t range_code,
                             int32_t overlap_code, at::Tensor* clamped_sizes) {
  const int64_t count = sizes.size(0);
  TORCH_CHECK(count <= kRaggedFastStatusMax, "batchchol: too many blocks for block_status_cuda");
  const auto opts = sizes.options();
  at::Tensor status = at::empty({count}, opts.dtype(at::kInt));
  if (clamped_sizes) *clamped_sizes = at::empty({count}, opts.dtype(at::kInt));
  if (count == 0) return status;
  const at::Tensor n = sizes.contiguous();
  const at::Tensor off = offsets.contiguous();
  at::Tensor pre = at::empty({count}, opts.dtype(at::kInt));
  // Spans, their exclusive running maxima, and the out-of-order flag, in one buffer.
  at::Tensor work = at::empty({int64_t(2 * count * sizeof(Span) + 16)}, opts.dtype(at::kByte));
  Span* span = reinterpret_cast<Span*>(work.data_ptr());
  Span* before = span + count;
  int32_t* unordered = reinterpret_cast<int32_t*>(before + count);
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  C10_CUDA_CHECK(cudaMemsetAsync(unordered, 0, sizeof(int32_t), stream));
  const unsigned blocks = ceil_div(count, kStatusThreads);
  int32_t* clamped = clamped_sizes ? clamped_sizes->data_ptr<int32_t>() : nullptr;
  if (n.scalar_type() == at::kInt) {
    block_range_kernel<<<blocks, kStatusThreads, 0, stream>>>(
        n.const_data_ptr<int32_t>(), off.const_data_ptr<int64_t>(), count, rows, cols, numel,
        limit, range_code, pre.data_ptr<int32_t>(), span, clamped);
  } else {
    block_range_kernel<<<blocks, kStatusThreads, 0, stream>>>(
        n.const_data_ptr<int64_t>(), off.const_data_ptr<int64_t>(), count, rows, cols, numel,
        limit, range_code, pre.data_ptr<int32_t>(), span, clamped);
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();

  const Span init{INT64_MIN, INT64_MIN};
  size_t temp_bytes = 0;
  C10_CUDA_CHECK(cub::DeviceScan::ExclusiveScan(nullptr, temp_bytes, span, before, SpanMax{},
                                                init, int(count), stream));
  at::Tensor temp = at::empty({int64_t(temp_bytes) + 1}, opts.dtype(at::kByte));
  C10_CUDA_CHECK(cub::DeviceScan::ExclusiveScan(temp.data_ptr(), temp_bytes, span, before,
                                                SpanMax{}, init, int(count), stream));

  block_overlap_kernel<<<blocks, kStatusThreads, 0, stream>>>(
      pre.const_data_ptr<int32_t>(), span, before, count, overlap_code, unordered,
      status.data_ptr<int32_t>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  block_overlap_pairwise_kernel<<<blocks, kStatusThreads, 0, stream>>>(
      span, count, overlap_code, unordered, status.data_ptr<int32_t>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return status;
}

}  // namespace cuda
}  // namespace batchchol
