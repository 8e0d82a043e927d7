// ragged_matrix_output (ragged_launch.h): the output buffer of the ragged potrf kernels
// without a memset of the whole buffer: each block's thread zeroes the gap after it
// (ragged_output_device.cuh). A batch out of order, with an invalid block or with a long
// gap, raises a device flag, and a second kernel, which returns at once while the flag
// is clear, zeroes everything.
// (A memset of L cost 0.46 of the 3.6 ms of 10,000 float64 matrices of order 128 on
// an H100: a full extra write of the output.) Small outputs are cleared with one memset
// all the same: one GPU operation instead of three and an allocation fewer, for calls
// that are bound by host time and the count of GPU operations.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include "cuda/launch_utils.h"
#include "cuda/ragged_launch.h"
#include "cuda/ragged_output_device.cuh"

namespace batchchol {
namespace cuda {
namespace {

constexpr int kZeroThreads = 256;
// Outputs of at most this many bytes are cleared whole by a memset (a few microseconds
// of GPU time at most).
constexpr int64_t kMemsetOutputBytes = int64_t(16) << 20;

template <typename T>
__global__ void zero_gaps_kernel(T* __restrict__ out, int64_t numel,
                                 const int64_t* __restrict__ offsets, const int* __restrict__ sizes,
                                 const int* __restrict__ status, int64_t count,
                                 int* __restrict__ flag) {
  const int64_t b = int64_t(blockIdx.x) * kZeroThreads + threadIdx.x;
  if (b >= count) return;
  if (!zero_gap_after(out, numel, 1, offsets, sizes[b], status ? status[b] : 0, b, count))
    atomicOr(flag, 1);
}

template <typename T>
__global__ void zero_all_if_kernel(T* __restrict__ out, int64_t numel, const int* __restrict__ flag) {
  if (*flag == 0) return;
  for (int64_t e = int64_t(blockIdx.x) * kZeroThreads + threadIdx.x; e < numel;
       e += int64_t(gridDim.x) * kZeroThreads)
    out[e] = T(0);
}

}  // namespace

at::Tensor zeroed_like(const at::Tensor& like) {
  at::Tensor out = at::empty_like(like, at::MemoryFormat::Contiguous);
  if (out.nbytes() > 0) {
    C10_CUDA_CHECK(cudaMemsetAsync(out.mutable_data_ptr(), 0, out.nbytes(),
                                   at::cuda::getCurrentCUDAStream()));
  }
  return out;
}

at::Tensor ragged_matrix_output(const at::Tensor& values, const RaggedBatch& rb) {
  at::Tensor out = at::empty_like(values, at::MemoryFormat::Contiguous);
  const int64_t numel = out.numel();
  if (numel == 0) return out;
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  if (rb.count == 0 || out.nbytes() <= static_cast<size_t>(kMemsetOutputBytes)) {
    C10_CUDA_CHECK(cudaMemsetAsync(out.mutable_data_ptr(), 0, out.nbytes(), stream));
    return out;
  }
  // A memset rather than at::zeros, whose fill goes through TensorIterator's launch path
  // (host time is most of a small ragged call).
  at::Tensor flag = at::empty({1}, values.options().dtype(at::kInt));
  C10_CUDA_CHECK(cudaMemsetAsync(flag.mutable_data_ptr<int>(), 0, sizeof(int), stream));
  const int* status = rb.status.defined() ? rb.status.const_data_ptr<int>() : nullptr;
  const unsigned all_blocks = static_cast<unsigned>(std::min<int64_t>(
      ceil_div(numel, kZeroThreads), 8 * at::cuda::getCurrentDeviceProperties()->multiProcessorCount));
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES(values.scalar_type(), "batchchol_ragged_output", [&] {
    scalar_t* p = out.mutable_data_ptr<scalar_t>();
    zero_gaps_kernel<scalar_t><<<ceil_div(rb.count, kZeroThreads), kZeroThreads, 0, stream>>>(
        p, numel, rb.offsets.const_data_ptr<int64_t>(), rb.sizes.const_data_ptr<int>(), status,
        rb.count, flag.mutable_data_ptr<int>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    zero_all_if_kernel<scalar_t><<<all_blocks, kZeroThreads, 0, stream>>>(p, numel,
                                                                         flag.const_data_ptr<int>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return out;
}

}  // namespace cuda
}  // namespace batchchol
