// Device-side validation of ragged metadata (common/ragged.h) in two launches for the
// matrices and their right-hand sides together, without a scan and without a memset.
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
#include "cuda/ragged_status_device.cuh"
#include "cuda/ragged_status_launch.h"

namespace batchchol {
namespace cuda {

namespace {

using namespace status_device;

template <typename IdxT>
__global__ void __launch_bounds__(kStatusThreads)
    block_status_kernel(const IdxT* __restrict__ n, StatusArgs a) {
  check_blocks(n, a);
}

template <typename IdxT>
__global__ void __launch_bounds__(kStatusThreads)
    block_overlap_pairwise_kernel(const IdxT* __restrict__ n, StatusArgs a, int nflags) {
  settle_blocks(n, a, nflags);
}

template <typename IdxT>
void launch_status(const at::Tensor& n, const StatusArgs& a, cudaStream_t stream) {
  const unsigned blocks = ceil_div(a.count, kStatusThreads);
  const IdxT* np = n.const_data_ptr<IdxT>();
  block_status_kernel<IdxT><<<blocks, kStatusThreads, 0, stream>>>(np, a);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  block_overlap_pairwise_kernel<IdxT><<<blocks, kStatusThreads, 0, stream>>>(
      np, a, static_cast<int>(blocks));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

BlockStatus block_status_cuda(const at::Tensor& sizes, int64_t limit, const StatusOperand& a,
                              const StatusOperand* b) {
  const int64_t count = sizes.size(0);
  TORCH_CHECK(count <= kRaggedFastStatusMax, "batchchol: too many blocks for block_status_cuda");
  const int ops = b ? 2 : 1;
  const int64_t nflags = ceil_div(count, kStatusThreads);
  // One allocation: the statuses, the clamped sizes, merged, the thread blocks' flags.
  at::Tensor buf =
      at::empty({status_buffer_words(count, ops, nflags)}, sizes.options().dtype(at::kInt));
  BlockStatus out;
  int64_t used = 0;
  const auto take = [&](int64_t len) {
    at::Tensor t = buf.narrow(0, used, len);
    used += len;
    return t;
  };
  out.status = take(count);
  if (b) out.b_status = take(count);
  out.clamped = take(count);
  if (b) out.merged = take(count);
  if (count == 0) return out;
  const at::Tensor n = sizes.contiguous();
  const at::Tensor a_off = a.offsets.contiguous();
  const at::Tensor b_off = b ? b->offsets.contiguous() : at::Tensor();
  const StatusArgs args =
      status_args(count, limit, a, a_off.const_data_ptr<int64_t>(), b,
                  b ? b_off.const_data_ptr<int64_t>() : nullptr, buf.mutable_data_ptr<int32_t>(),
                  nflags);
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  if (n.scalar_type() == at::kInt) {
    launch_status<int32_t>(n, args, stream);
  } else {
    launch_status<int64_t>(n, args, stream);
  }
  return out;
}

}  // namespace cuda
}  // namespace batchchol
