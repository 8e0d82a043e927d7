// Device-side validation of ragged metadata (common/ragged.h) in two launches per
// operand, without a scan and without a memset.
//
// The tensor-op version in ragged.cpp (sort by offset, gathers, a cummax, scatters: about
// 35 launches per operand) cost ~0.6 ms per call on an H100. The first CUDA version
// (range kernel, a cub scan of the running maxima, overlap kernel, pairwise kernel, a
// memset: six GPU operations and five allocations) took about 40 us of host time per
// call, as much as the GPU spends factoring 5,000 matrices of n <= 32. Here each live
// block is checked against the nearest earlier live block: it must start at or after
// that block's end. When every live block passes, the live blocks are in offset order
// and disjoint, so no overlap exists and the statuses are exact. When one fails, its
// thread block raises its own flag (one word per thread block, always written: nothing
// to clear), and the second kernel, which returns at once while every flag is clear,
// redoes the overlap check pairwise: O(count^2) only for batches out of order or with
// overlaps, which is why this path serves at most kRaggedFastStatusMax blocks
// (ragged.cpp sorts beyond). The nearest earlier live block comes from a max-scan of
// the live indices inside the thread block; only a thread block's first live block
// looks further back, across the empty or invalid blocks before it (live_end_before).
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include <climits>
#include <cstdint>

#include "common/ragged.h"
#include "cuda/launch_utils.h"
#include "cuda/ragged_status_launch.h"

namespace batchchol {
namespace cuda {

namespace {

constexpr int kStatusThreads = 256;

// What the metadata says of one block: its status before the overlap check and, when
// it is live (valid and not empty), the elements [start, end) it covers.
struct BlockSpan {
  int32_t pre = 0;
  bool live = false;
  int64_t start = 0, end = 0;
};

struct StatusArgs {
  int64_t count, rows, cols, numel, limit;
  int32_t range_code, overlap_code;
};

template <typename IdxT>
__device__ __forceinline__ BlockSpan block_span(const IdxT* __restrict__ n,
                                                const int64_t* __restrict__ off,
                                                const StatusArgs& a, int64_t i) {
  const int64_t ni = n[i];
  BlockSpan s;
  if (ni < 0) {
    s.pre = kNegativeSize;
  } else if (ni > a.limit) {
    s.pre = kSizeAboveMaxN;
  } else {
    const int64_t ext = (a.rows == kSizeN ? ni : a.rows) * (a.cols == kSizeN ? ni : a.cols);
    const int64_t o = off[i];  // < 2^62 above
    if (o < 0 || ext > a.numel || o > a.numel - ext) {
      s.pre = a.range_code;
    } else if (ext > 0) {
      s.live = true;
      s.start = o;
      s.end = o + ext;
    }
  }
  return s;
}

// End of the nearest live block before index `before` (INT64_MIN: none), looked for by
// the whole thread block, kLookBack entries per step: a long run of empty blocks costs
// run / kLookBack coalesced steps. (A serial look-back in one thread took 21 ms for
// 65,535 empty blocks before a live one on an H100, one warp 1.6 ms.) Called by every
// thread of the block; block indices fit an int (count <= kRaggedFastStatusMax).
constexpr int kLookBackPerThread = 4;
constexpr int kLookBack = kStatusThreads * kLookBackPerThread;
static_assert(kRaggedFastStatusMax <= INT32_MAX, "look-back indices are ints");

template <typename IdxT>
__device__ __forceinline__ int64_t live_end_before(const IdxT* __restrict__ n,
                                                   const int64_t* __restrict__ off,
                                                   const StatusArgs& a, int before) {
  __shared__ int warp_best[kStatusThreads / 32];
  __shared__ int64_t found_end;
  const int t = threadIdx.x;
  for (int j0 = before - 1; j0 >= 0; j0 -= kLookBack) {
    int best = -1;  // this thread's largest live index of the step
    int64_t best_end = 0;
#pragma unroll
    for (int u = 0; u < kLookBackPerThread; ++u) {
      const int j = j0 - (u * kStatusThreads + t);
      if (best < 0 && j >= 0) {
        const BlockSpan p = block_span(n, off, a, j);
        if (p.live) best = j, best_end = p.end;
      }
    }
    const int warp_max = __reduce_max_sync(0xffffffffu, best);
    if (t % 32 == 0) warp_best[t / 32] = warp_max;
    __syncthreads();
    int block_max = -1;
#pragma unroll
    for (int w = 0; w < kStatusThreads / 32; ++w) block_max = max(block_max, warp_best[w]);
    if (best >= 0 && best == block_max) found_end = best_end;  // one thread holds it
    __syncthreads();
    if (block_max >= 0) return found_end;
  }
  return INT64_MIN;
}

// status[i]: the block's code, 0 for a live block (exact unless its thread block raised
// flags[blockIdx.x]); merged[i] (with prior): prior[i] where that is non-zero, else
// status[i] (the first failing operand's code, as ragged.cpp's tensor version). A live
// block's predecessor is found inside the thread block by a max-scan of the live
// indices; only the thread block's first live block needs one from before the thread
// block, which the whole thread block looks for.
template <typename IdxT>
__global__ void __launch_bounds__(kStatusThreads)
    block_status_kernel(const IdxT* __restrict__ n, const int64_t* __restrict__ off,
                        StatusArgs a, int32_t* __restrict__ status,
                        int32_t* __restrict__ clamped, int32_t* __restrict__ flags,
                        const int32_t* __restrict__ prior, int32_t* __restrict__ merged) {
  constexpr int kWarps = kStatusThreads / 32;
  __shared__ int64_t span_end[kStatusThreads];
  __shared__ int warp_last[kWarps];
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  const int64_t base = int64_t(blockIdx.x) * kStatusThreads;
  const int64_t i = base + t;
  const BlockSpan s = i < a.count ? block_span(n, off, a, i) : BlockSpan{};
  span_end[t] = s.end;
  // Exclusive max-scan of the live thread indices: the nearest live block before t.
  int last = s.live ? t : -1;
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const int o = __shfl_up_sync(0xffffffffu, last, d);
    if (lane >= d) last = max(last, o);
  }
  if (lane == 31) warp_last[warp] = last;
  int prev = __shfl_up_sync(0xffffffffu, last, 1);
  if (lane == 0) prev = -1;
  __syncthreads();
  int any_live = -1;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) {
    if (w < warp) prev = max(prev, warp_last[w]);
    any_live = max(any_live, warp_last[w]);
  }
  // Uniform across the block: only a block with a live block needs its predecessor.
  const int64_t outside_end =
      any_live >= 0 ? live_end_before(n, off, a, int(base)) : INT64_MIN;
  bool irregular = false;
  if (s.live) {
    const int64_t prev_end = prev >= 0 ? span_end[prev] : outside_end;
    irregular = prev_end != INT64_MIN && s.start < prev_end;
  }
  if (i < a.count) {
    status[i] = s.pre;
    if (merged) merged[i] = prior[i] != 0 ? prior[i] : s.pre;
    if (clamped) {
      const int64_t ni = n[i];
      clamped[i] = int32_t(ni < 0 ? 0 : (ni > a.limit ? a.limit : ni));
    }
  }
  irregular = __syncthreads_or(irregular);
  if (t == 0) flags[blockIdx.x] = irregular ? 1 : 0;
}

// The exact overlap check, pairwise, when some thread block raised its flag: block i
// overlaps when a live block that comes before it in (start, index) order ends after i
// starts (the order of ragged.cpp's sorted sweep).
template <typename IdxT>
__global__ void __launch_bounds__(kStatusThreads)
    block_overlap_pairwise_kernel(const IdxT* __restrict__ n, const int64_t* __restrict__ off,
                                  StatusArgs a, const int32_t* __restrict__ flags, int nflags,
                                  int32_t* __restrict__ status, const int32_t* __restrict__ prior,
                                  int32_t* __restrict__ merged) {
  bool raised = false;
  for (int f = threadIdx.x; f < nflags; f += kStatusThreads) raised |= flags[f] != 0;
  if (!__syncthreads_or(raised)) return;
  __shared__ int64_t tile_start[kStatusThreads], tile_end[kStatusThreads];
  const int64_t i = int64_t(blockIdx.x) * kStatusThreads + threadIdx.x;
  const BlockSpan s = i < a.count ? block_span(n, off, a, i) : BlockSpan{};
  bool clash = false;
  for (int64_t j0 = 0; j0 < a.count; j0 += kStatusThreads) {
    __syncthreads();
    const int64_t jl = j0 + threadIdx.x;
    const BlockSpan t = jl < a.count ? block_span(n, off, a, jl) : BlockSpan{};
    tile_start[threadIdx.x] = t.live ? t.start : INT64_MIN;
    tile_end[threadIdx.x] = t.live ? t.end : INT64_MIN;
    __syncthreads();
    const int m = a.count - j0 < kStatusThreads ? int(a.count - j0) : kStatusThreads;
    for (int u = 0; u < m; ++u) {
      const int64_t os = tile_start[u], oe = tile_end[u];
      clash |= oe != INT64_MIN && (os < s.start || (os == s.start && j0 + u < i)) &&
               oe > s.start;
    }
  }
  if (s.live) {
    const int32_t st = clash ? a.overlap_code : 0;
    status[i] = st;
    if (merged) merged[i] = prior[i] != 0 ? prior[i] : st;
  }
}

template <typename IdxT>
void launch_status(const at::Tensor& n, const at::Tensor& off, const StatusArgs& a,
                   int32_t* status, int32_t* clamped, int32_t* flags, const int32_t* prior,
                   int32_t* merged, cudaStream_t stream) {
  const unsigned blocks = ceil_div(a.count, kStatusThreads);
  const IdxT* np = n.const_data_ptr<IdxT>();
  const int64_t* op = off.const_data_ptr<int64_t>();
  block_status_kernel<IdxT><<<blocks, kStatusThreads, 0, stream>>>(np, op, a, status, clamped,
                                                                    flags, prior, merged);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  block_overlap_pairwise_kernel<IdxT><<<blocks, kStatusThreads, 0, stream>>>(
      np, op, a, flags, static_cast<int>(blocks), status, prior, merged);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

BlockStatus block_status_cuda(const at::Tensor& sizes, const at::Tensor& offsets, int64_t rows,
                              int64_t cols, int64_t numel, int64_t limit, int32_t range_code,
                              int32_t overlap_code, bool want_clamped, const at::Tensor& prior) {
  const int64_t count = sizes.size(0);
  TORCH_CHECK(count <= kRaggedFastStatusMax, "batchchol: too many blocks for block_status_cuda");
  TORCH_CHECK(!prior.defined() || (prior.scalar_type() == at::kInt && prior.is_contiguous() &&
                                   prior.numel() == count),
              "batchchol: block_status_cuda: bad prior status");
  const int64_t nflags = ceil_div(count, kStatusThreads);
  // One allocation: status, merged, clamped sizes, the thread blocks' flags.
  const int64_t parts = 1 + (prior.defined() ? 1 : 0) + (want_clamped ? 1 : 0);
  at::Tensor buf = at::empty({parts * count + nflags}, sizes.options().dtype(at::kInt));
  BlockStatus out;
  int64_t used = 0;
  const auto take = [&](int64_t len) {
    at::Tensor t = buf.narrow(0, used, len);
    used += len;
    return t;
  };
  out.status = take(count);
  if (prior.defined()) out.merged = take(count);
  if (want_clamped) out.clamped = take(count);
  if (count == 0) return out;
  int32_t* flags = buf.mutable_data_ptr<int32_t>() + parts * count;
  const at::Tensor n = sizes.contiguous();
  const at::Tensor off = offsets.contiguous();
  const StatusArgs a{count, rows, cols, numel, limit, range_code, overlap_code};
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  int32_t* status = out.status.mutable_data_ptr<int32_t>();
  int32_t* clamped = want_clamped ? out.clamped.mutable_data_ptr<int32_t>() : nullptr;
  const int32_t* pr = prior.defined() ? prior.const_data_ptr<int32_t>() : nullptr;
  int32_t* merged = prior.defined() ? out.merged.mutable_data_ptr<int32_t>() : nullptr;
  if (n.scalar_type() == at::kInt) {
    launch_status<int32_t>(n, off, a, status, clamped, flags, pr, merged, stream);
  } else {
    launch_status<int64_t>(n, off, a, status, clamped, flags, pr, merged, stream);
  }
  return out;
}

}  // namespace cuda
}  // namespace batchchol
