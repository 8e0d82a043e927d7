// Device routines of the ragged metadata checks (common/ragged.h's status codes), shared
// by the status kernels (ragged_status_cuda.cu) and the fused prologue of the ragged
// factorizations (ragged_prologue_device.cuh). The method is described at the top of
// ragged_status_cuda.cu: each live block against the nearest earlier live one, a flag
// per thread block where one fails, and a pairwise pass for the operands so flagged.
#pragma once

#include <climits>
#include <cstdint>

#include "common/ragged.h"
#include "cuda/ragged_status_launch.h"

namespace batchchol {
namespace cuda {
namespace status_device {

constexpr int kStatusThreads = 256;

// What the metadata says of one block: its status before the overlap check and, when
// it is live (valid and not empty), the elements [start, end) it covers.
struct BlockSpan {
  int32_t pre = 0;
  bool live = false;
  int64_t start = 0, end = 0;
};

template <typename IdxT>
__device__ __forceinline__ BlockSpan block_span(const IdxT* __restrict__ n, const OperandArgs& a,
                                                int64_t limit, int64_t i) {
  const int64_t ni = n[i];
  BlockSpan s;
  if (ni < 0) {
    s.pre = kNegativeSize;
  } else if (ni > limit) {
    s.pre = kSizeAboveMaxN;
  } else {
    const int64_t ext = (a.rows == kSizeN ? ni : a.rows) * (a.cols == kSizeN ? ni : a.cols);
    const int64_t o = a.off[i];  // < 2^62 above
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
                                                   const OperandArgs& a, int64_t limit,
                                                   int before) {
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
        const BlockSpan p = block_span(n, a, limit, j);
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

// One operand's status[i]: the block's code, 0 for a live block (exact unless its
// thread block raised flags[blockIdx.x]). A live block's predecessor is found inside
// the thread block by a max-scan of the live indices; only the thread block's first
// live block needs one from before the thread block, which the whole thread block looks
// for. Called by every thread of the block; returns the block's code.
template <typename IdxT>
__device__ __forceinline__ int32_t operand_status(const IdxT* __restrict__ n, const OperandArgs& o,
                                                  int64_t count, int64_t limit) {
  constexpr int kWarps = kStatusThreads / 32;
  __shared__ int64_t span_end[kStatusThreads];
  __shared__ int warp_last[kWarps];
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  const int64_t base = int64_t(blockIdx.x) * kStatusThreads;
  const int64_t i = base + t;
  const BlockSpan s = i < count ? block_span(n, o, limit, i) : BlockSpan{};
  span_end[t] = s.end;
  // Exclusive max-scan of the live thread indices: the nearest live block before t.
  int last = s.live ? t : -1;
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const int v = __shfl_up_sync(0xffffffffu, last, d);
    if (lane >= d) last = max(last, v);
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
      any_live >= 0 ? live_end_before(n, o, limit, int(base)) : INT64_MIN;
  bool irregular = false;
  if (s.live) {
    const int64_t prev_end = prev >= 0 ? span_end[prev] : outside_end;
    irregular = prev_end != INT64_MIN && s.start < prev_end;
  }
  if (i < count) o.status[i] = s.pre;
  // Also the barrier before the shared arrays are reused for the next operand.
  irregular = __syncthreads_or(irregular);
  if (t == 0) o.flags[blockIdx.x] = irregular ? 1 : 0;
  return s.pre;
}

// One operand's exact overlap check, pairwise: block i overlaps when a live block that
// comes before it in (start, index) order ends after i starts (the order of ragged.cpp's
// sorted sweep). Called by every thread of the block; returns i's final code.
template <typename IdxT>
__device__ __forceinline__ int32_t operand_overlaps(const IdxT* __restrict__ n,
                                                    const OperandArgs& o, int64_t count,
                                                    int64_t limit) {
  __shared__ int64_t tile_start[kStatusThreads], tile_end[kStatusThreads];
  const int64_t i = int64_t(blockIdx.x) * kStatusThreads + threadIdx.x;
  const BlockSpan s = i < count ? block_span(n, o, limit, i) : BlockSpan{};
  bool clash = false;
  for (int64_t j0 = 0; j0 < count; j0 += kStatusThreads) {
    __syncthreads();
    const int64_t jl = j0 + threadIdx.x;
    const BlockSpan t = jl < count ? block_span(n, o, limit, jl) : BlockSpan{};
    tile_start[threadIdx.x] = t.live ? t.start : INT64_MIN;
    tile_end[threadIdx.x] = t.live ? t.end : INT64_MIN;
    __syncthreads();
    const int m = count - j0 < kStatusThreads ? int(count - j0) : kStatusThreads;
    for (int u = 0; u < m; ++u) {
      const int64_t os = tile_start[u], oe = tile_end[u];
      clash |= oe != INT64_MIN && (os < s.start || (os == s.start && j0 + u < i)) &&
               oe > s.start;
    }
  }
  if (!s.live) return s.pre;
  const int32_t st = clash ? o.overlap_code : 0;
  o.status[i] = st;
  return st;
}

// Whether some thread block raised operand o's flag (block-wide).
__device__ __forceinline__ bool any_flag(const OperandArgs& o, int nflags) {
  bool raised = false;
  for (int f = threadIdx.x; f < nflags; f += kStatusThreads) raised |= o.flags[f] != 0;
  return __syncthreads_or(raised);
}

// Each operand's status of block i (operand_status), the clamped size and, with two
// operands, merged; returns i's code (the first operand's where it is non-zero, else the
// second's), exact unless a flag was raised. Called by every thread of the block.
template <typename IdxT>
__device__ __forceinline__ int32_t check_blocks(const IdxT* __restrict__ n, const StatusArgs& a) {
  const int64_t i = int64_t(blockIdx.x) * kStatusThreads + threadIdx.x;
  const int32_t first = operand_status(n, a.op[0], a.count, a.limit);
  const int32_t second = a.ops > 1 ? operand_status(n, a.op[1], a.count, a.limit) : 0;
  const int32_t code = first != 0 ? first : second;
  if (i < a.count) {
    if (a.merged) a.merged[i] = code;
    const int64_t ni = n[i];
    a.clamped[i] = int32_t(ni < 0 ? 0 : (ni > a.limit ? a.limit : ni));
  }
  return code;
}

// After check_blocks (a kernel before, or a grid-wide barrier): redoes the overlap check
// pairwise for each operand whose flag some thread block raised (the other operand's
// statuses are exact already), rewrites merged, and returns block i's final code (0 past
// the batch). Called by every thread of the block; reads its statuses back where no flag
// is raised.
template <typename IdxT>
__device__ __forceinline__ int32_t settle_blocks(const IdxT* __restrict__ n, const StatusArgs& a,
                                                 int nflags) {
  const bool redo_first = any_flag(a.op[0], nflags);
  const bool redo_second = a.ops > 1 && any_flag(a.op[1], nflags);
  const int64_t i = int64_t(blockIdx.x) * kStatusThreads + threadIdx.x;
  const bool in = i < a.count;
  if (!redo_first && !redo_second) return in ? (a.merged ? a.merged[i] : a.op[0].status[i]) : 0;
  const int32_t first = redo_first ? operand_overlaps(n, a.op[0], a.count, a.limit)
                                   : (in ? a.op[0].status[i] : 0);
  int32_t second = 0;
  if (a.ops > 1) {
    second = redo_second ? operand_overlaps(n, a.op[1], a.count, a.limit)
                         : (in ? a.op[1].status[i] : 0);
  }
  const int32_t code = first != 0 ? first : second;
  if (a.merged && in) a.merged[i] = code;
  return code;
}

// The int32 words of block_status_cuda's buffer (ragged_status_launch.h) for count blocks
// of `ops` operands: each operand's statuses, the clamped sizes, merged (two operands),
// then each operand's nflags thread-block flags.
inline int64_t status_buffer_words(int64_t count, int ops, int64_t nflags) {
  return (ops + 1 + (ops > 1 ? 1 : 0)) * count + ops * nflags;
}

// The kernels' arguments over such a buffer at buf (device memory); a_off / b_off: the
// operands' int64 offsets on the device (b_off null: one operand).
inline StatusArgs status_args(int64_t count, int64_t limit, const StatusOperand& a,
                              const int64_t* a_off, const StatusOperand* b, const int64_t* b_off,
                              int32_t* buf, int64_t nflags) {
  StatusArgs args{};
  args.count = count;
  args.limit = limit;
  args.ops = b ? 2 : 1;
  int32_t* flags = buf + (args.ops + 1 + (b ? 1 : 0)) * count;
  args.op[0] = OperandArgs{a_off, a.rows, a.cols, a.numel, a.range_code, a.overlap_code, buf, flags};
  if (b) {
    args.op[1] = OperandArgs{b_off, b->rows, b->cols, b->numel, b->range_code, b->overlap_code,
                             buf + count, flags + nflags};
  }
  args.clamped = buf + args.ops * count;
  args.merged = b ? buf + (args.ops + 1) * count : nullptr;
  return args;
}

}  // namespace status_device
}  // namespace cuda
}  // namespace batchchol
