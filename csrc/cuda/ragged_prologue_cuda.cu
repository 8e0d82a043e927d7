// The fused prologue of the ragged factorizations (ragged_prologue.h), in two kernels
// over the batch and one allocation beside L and info:
//   check   each operand's status before the overlap check, the clamped sizes, merged
//           (ragged_status_device.cuh); the gap after each block of L zeroed
//           (ragged_output_device.cuh), or a flag raised for a whole clear; the grouping's
//           counters zeroed
//   settle  the overlap check redone pairwise where a check flag was raised; then each
//           matrix's group from its final status (info for those no group takes), counted
//           or, in one pass, placed (ragged_bins_device.cuh); L cleared whole where a gap
//           flag or a right-hand side's check flag was raised
// and, for a two-pass grouping, group_by_size's placement pass. The separate steps took
// five GPU operations (a one-pass grouping, L of at most 16 MB) to eight (a two-pass one,
// a larger L) and two or three allocations beside L and info, each operation a few
// microseconds of host time in calls that are bound by it.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "cuda/launch_utils.h"
#include "cuda/ragged_bins_device.cuh"
#include "cuda/ragged_output_device.cuh"
#include "cuda/ragged_prologue.h"
#include "cuda/ragged_status_device.cuh"

namespace batchchol {
namespace cuda {
namespace {

using namespace status_device;

static_assert(kStatusThreads >= 2 * kMaxSizeGroups, "block 0 zeroes the group counters");

// L as 32-bit words (every dtype's element is a whole number of them); flags: one word
// per thread block of the check kernel, raised where L needs a whole clear.
struct GapArgs {
  uint32_t* out;  // null: L is empty
  int64_t numel;  // elements
  int words;      // per element
  int32_t* flags;
};

struct GroupArgs {
  SizeKey key;
  int groups, stride;
  int* counts;  // null: no grouping (counts, cursors, list follow)
  int* info;
};

template <typename IdxT>
__global__ void __launch_bounds__(kStatusThreads)
    prologue_check_kernel(const IdxT* __restrict__ n, StatusArgs a, GapArgs gap, int* counters) {
  const int32_t code = check_blocks(n, a);
  const int64_t i = int64_t(blockIdx.x) * kStatusThreads + threadIdx.x;
  if (gap.out != nullptr) {
    bool whole = false;
    if (i < a.count) {
      const int64_t ni = code == 0 ? int64_t(n[i]) : 0;
      whole = !zero_gap_after(gap.out, gap.numel, gap.words, a.op[0].off, ni, code, i, a.count);
    }
    whole = __syncthreads_or(whole);
    if (threadIdx.x == 0) gap.flags[blockIdx.x] = whole ? 1 : 0;
  }
  // The settle kernel, which counts, starts after every block of this one has finished.
  if (counters != nullptr && blockIdx.x == 0 && threadIdx.x < 2 * kMaxSizeGroups)
    counters[threadIdx.x] = 0;
}

// Blocks [0, nflags) settle the statuses and group; every block takes part in the whole
// clear of L (the grid may be wider than the batch's blocks for a large L).
template <typename IdxT>
__global__ void __launch_bounds__(kStatusThreads)
    prologue_settle_kernel(const IdxT* __restrict__ n, StatusArgs a, int nflags, GapArgs gap,
                           GroupArgs grp) {
  if (int(blockIdx.x) < nflags) {  // uniform across the block: its barriers are safe
    const int32_t code = settle_blocks(n, a, nflags);
    if (grp.counts != nullptr) {
      const int64_t i = int64_t(blockIdx.x) * kStatusThreads + threadIdx.x;
      const int g = i < a.count ? group_of(grp.key, code, code == 0 ? a.clamped[i] : 0, i, grp.info)
                                : -1;
      if (grp.stride > 0) {
        place_groups(g, i, grp.groups, grp.stride, grp.counts, nullptr,
                     grp.counts + 2 * kMaxSizeGroups);
      } else {
        count_groups(g, grp.counts);
      }
    }
  }
  if (gap.out == nullptr) return;
  // The gap checks saw each matrix's code before the overlap checks. For the matrices that
  // is enough: blocks that all pass them are disjoint, so no overlap is found later. A
  // right-hand side's overlap (-6) is not seen by them, and its matrix's block of L, which
  // no factorization then writes, needs the whole clear too.
  bool whole = false;
  for (int f = threadIdx.x; f < nflags; f += kStatusThreads)
    whole |= gap.flags[f] != 0 || (a.ops > 1 && a.op[1].flags[f] != 0);
  if (!__syncthreads_or(whole)) return;
  const int64_t words = gap.numel * gap.words;
  for (int64_t e = int64_t(blockIdx.x) * kStatusThreads + threadIdx.x; e < words;
       e += int64_t(gridDim.x) * kStatusThreads)
    gap.out[e] = 0u;
}

template <typename IdxT>
void launch_prologue(const at::Tensor& n, const StatusArgs& a, int64_t nflags, const GapArgs& gap,
                     const GroupArgs& grp, cudaStream_t stream) {
  const IdxT* np = n.const_data_ptr<IdxT>();
  prologue_check_kernel<IdxT><<<unsigned(nflags), kStatusThreads, 0, stream>>>(np, a, gap,
                                                                              grp.counts);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  // Wide enough for a whole clear of L at a few blocks per SM (it returns at once
  // otherwise, as ragged_output_cuda.cu's zero_all_if_kernel does).
  int64_t grid = nflags;
  if (gap.out != nullptr) {
    const int64_t clear = std::min<int64_t>(
        ceil_div(gap.numel * gap.words, kStatusThreads),
        4 * at::cuda::getCurrentDeviceProperties()->multiProcessorCount);
    grid = std::max(grid, clear);
  }
  prologue_settle_kernel<IdxT><<<unsigned(grid), kStatusThreads, 0, stream>>>(
      np, a, static_cast<int>(nflags), gap, grp);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

bool ragged_prologue_applies(const at::Tensor& sizes, const at::Tensor& offsets,
                             const at::Tensor* b_offsets, const c10::optional<int64_t>& max_n) {
  if (!max_n || !sizes.is_cuda() || !offsets.is_cuda() || (b_offsets && !b_offsets->is_cuda()))
    return false;
  const int64_t count = sizes.size(0);
  if (count < 1 || count > kRaggedFastStatusMax) return false;
  const char* env = std::getenv("BATCHCHOL_RAGGED_PROLOGUE");
  return env == nullptr || std::strcmp(env, "0") != 0;
}

RaggedPrologue ragged_prologue(const char* op, const at::Tensor& A, const at::Tensor& sizes,
                               const at::Tensor& offsets, int64_t max_n, const RaggedRhs* rhs,
                               const GroupPlan& plan) {
  check_ragged_max_n(op, max_n);
  TORCH_CHECK(A.is_contiguous() && A.element_size() % 4 == 0 && sizes.size(0) > 0 &&
                  sizes.size(0) <= kRaggedFastStatusMax,
              "batchchol: the fused ragged prologue does not serve this call");
  const int64_t count = sizes.size(0);
  const int ops = rhs ? 2 : 1;
  const int64_t nflags = ceil_div(count, kStatusThreads);
  RaggedPrologue p;
  if (plan.grouped) p.sg = size_group_layout(count, plan.warp_hi, plan.lo_n, plan.hi_n);
  // One allocation: block_status_cuda's buffer, the gap flags, the grouping's work.
  const int64_t status_words = status_buffer_words(count, ops, nflags);
  const int64_t group_words = plan.grouped ? size_group_words(p.sg, count) : 0;
  at::Tensor buf =
      at::empty({status_words + nflags + group_words}, sizes.options().dtype(at::kInt));
  int32_t* w = buf.mutable_data_ptr<int32_t>();

  RaggedBatch& rb = p.rb;
  rb.count = count;
  rb.max_n = max_n;
  const at::Tensor n = sizes.contiguous();
  rb.offsets = offsets.contiguous();
  if (rhs) rb.b_offsets = rhs->offsets.contiguous();
  const StatusOperand a_op{rb.offsets, kSizeN, kSizeN, A.numel(), kMatrixOutOfRange,
                           kMatrixOverlap};
  const StatusOperand b_op{rb.b_offsets, rhs ? rhs->shape.rows : 0, rhs ? rhs->shape.cols : 0,
                           rhs ? rhs->values.numel() : 0, kRhsOutOfRange, kRhsOverlap};
  const StatusArgs args = status_args(
      count, max_n, a_op, rb.offsets.const_data_ptr<int64_t>(), rhs ? &b_op : nullptr,
      rhs ? rb.b_offsets.const_data_ptr<int64_t>() : nullptr, w, nflags);
  // The views status_args laid out: the statuses, the clamped sizes, merged.
  rb.sizes = buf.narrow(0, ops * count, count);
  rb.status = buf.narrow(0, rhs ? (ops + 1) * count : 0, count);
  if (rhs) rb.rhs_status = buf.narrow(0, count, count);

  p.L = at::empty_like(A, at::MemoryFormat::Contiguous);
  p.info = at::empty({count}, A.options().dtype(at::kInt));
  const GapArgs gap{A.numel() > 0 ? static_cast<uint32_t*>(p.L.mutable_data_ptr()) : nullptr,
                    A.numel(), static_cast<int>(A.element_size() / 4), w + status_words};
  GroupArgs grp{};
  if (plan.grouped) {
    p.sg.work = buf;
    p.sg.base = status_words + nflags;
    grp = GroupArgs{size_key(p.sg), p.sg.groups + p.sg.warp_classes, p.sg.stride,
                    w + p.sg.base, p.info.mutable_data_ptr<int>()};
  }
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  if (n.scalar_type() == at::kInt) {
    launch_prologue<int32_t>(n, args, nflags, gap, grp, stream);
  } else {
    launch_prologue<int64_t>(n, args, nflags, gap, grp, stream);
  }
  if (plan.grouped && p.sg.stride == 0) place_size_groups(rb, p.sg, stream);
  return p;
}

}  // namespace cuda
}  // namespace batchchol
