// The fused prologue of the ragged factorizations (ragged_prologue.h): one allocation
// beside L and info, and the two phases of ragged_prologue_device.cuh in two kernels
// (or in the caller's launch: ragged_prologue_setup), then, for a two-pass grouping,
// group_by_size's placement pass. The separate steps took five GPU operations (a
// one-pass grouping, L of at most 16 MB) to eight (a two-pass one, a larger L) and two or
// three allocations beside L and info, each operation a few microseconds of host time in
// calls that are bound by it.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "cuda/launch_utils.h"
#include "cuda/ragged_prologue.h"
#include "cuda/ragged_prologue_device.cuh"

namespace batchchol {
namespace cuda {
namespace {

using namespace status_device;

template <typename IdxT>
__global__ void __launch_bounds__(kStatusThreads)
    prologue_check_kernel(const IdxT* __restrict__ n, PrologueArgs p) {
  prologue_check(n, p);
}

template <typename IdxT>
__global__ void __launch_bounds__(kStatusThreads)
    prologue_settle_kernel(const IdxT* __restrict__ n, PrologueArgs p) {
  prologue_settle(n, p);
}

template <typename IdxT>
void launch_prologue(const PrologueArgs& p, cudaStream_t stream) {
  const IdxT* n = static_cast<const IdxT*>(p.sizes);
  prologue_check_kernel<IdxT><<<unsigned(p.nflags), kStatusThreads, 0, stream>>>(n, p);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  // Wide enough for a whole clear of L at a few blocks per SM (it returns at once
  // otherwise, as ragged_output_cuda.cu's zero_all_if_kernel does).
  int64_t grid = p.nflags;
  if (p.gap.out != nullptr) {
    const int64_t clear = std::min<int64_t>(
        ceil_div(p.gap.numel * p.gap.words, kStatusThreads),
        4 * at::cuda::getCurrentDeviceProperties()->multiProcessorCount);
    grid = std::max(grid, clear);
  }
  prologue_settle_kernel<IdxT><<<unsigned(grid), kStatusThreads, 0, stream>>>(n, p);
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

RaggedPrologue ragged_prologue_setup(const char* op, const at::Tensor& A, const at::Tensor& sizes,
                                     const at::Tensor& offsets, int64_t max_n,
                                     const RaggedRhs* rhs, const GroupPlan& plan) {
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
  p.sizes = sizes.contiguous();
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
  p.args.status = args;
  p.args.gap = GapArgs{A.numel() > 0 ? static_cast<uint32_t*>(p.L.mutable_data_ptr()) : nullptr,
                       A.numel(), static_cast<int>(A.element_size() / 4), w + status_words};
  p.args.grp = GroupArgs{};
  if (plan.grouped) {
    p.sg.work = buf;
    p.sg.base = status_words + nflags;
    p.args.grp = GroupArgs{size_key(p.sg), p.sg.groups + p.sg.warp_classes, p.sg.stride,
                           w + p.sg.base, p.info.mutable_data_ptr<int>()};
  }
  p.args.nflags = static_cast<int>(nflags);
  p.args.sizes = p.sizes.const_data_ptr();
  p.args.sizes64 = p.sizes.scalar_type() == at::kLong;
  return p;
}

void launch_ragged_prologue(const RaggedPrologue& p) {
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  if (p.args.sizes64) {
    launch_prologue<int64_t>(p.args, stream);
  } else {
    launch_prologue<int32_t>(p.args, stream);
  }
  if (p.args.grp.counts != nullptr && p.sg.stride == 0) place_size_groups(p.rb, p.sg, stream);
}

RaggedPrologue ragged_prologue(const char* op, const at::Tensor& A, const at::Tensor& sizes,
                               const at::Tensor& offsets, int64_t max_n, const RaggedRhs* rhs,
                               const GroupPlan& plan) {
  RaggedPrologue p = ragged_prologue_setup(op, A, sizes, offsets, max_n, rhs, plan);
  launch_ragged_prologue(p);
  return p;
}

}  // namespace cuda
}  // namespace batchchol
