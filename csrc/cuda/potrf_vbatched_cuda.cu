// potrf_vbatched on CUDA: kernel family by the largest size of the batch.
//   registers   max_n <= 32: NP lanes per matrix, identity-padded to NP, one launch
//               per NP in 4, 8, 16, 32 (each matrix at the smallest that holds it)
//   shared      one block per matrix in shared memory (max_n must fit)
//   greedy      blocked panels, every matrix starting at the first step
//   lazy        blocked panels, each matrix starting so that all end on the last step
//   binned      (default for max_n > 32) registers for the matrices with n <= 32 and
//               lazy for the others: launches over the batch, each serving its bin
// BATCHCHOL_VBATCHED_KERNEL names one where it applies (benchmarks/bench_vbatched.py
// compares them).
#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <cstdlib>
#include <cstring>

#include "common/ops_vbatched.h"
#include "common/ragged.h"
#include "cuda/launch_utils.h"
#include "cuda/potrf_layout_launch.cuh"
#include "cuda/potrf_ragged_kernels.cuh"
#include "cuda/ragged_launch.h"

namespace batchchol {
namespace cuda {

namespace {

enum class RaggedKernel { kRegisters, kShared, kGreedy, kLazy, kBinned };
constexpr const char* kRaggedKernelNames[] = {"registers", "shared", "greedy", "lazy", "binned"};
constexpr int kSmallBin = 32;  // the registers kernel's largest n

template <typename T>
bool ragged_kernel_applies(RaggedKernel k, int max_n) {
  switch (k) {
    case RaggedKernel::kRegisters: return max_n <= kSmallBin;
    case RaggedKernel::kShared: return shared_fits<T>(max_n);
    default: return blocked_fits<T>(max_n);  // the blocked families, binned's second launch
  }
}

template <typename T>
RaggedKernel choose_ragged_kernel(int max_n) {
  if (const char* forced = std::getenv("BATCHCHOL_VBATCHED_KERNEL")) {
    for (int i = 0; i < 5; ++i) {
      const auto k = static_cast<RaggedKernel>(i);
      if (std::strcmp(forced, kRaggedKernelNames[i]) == 0 && ragged_kernel_applies<T>(k, max_n))
        return k;
    }
  }
  if (max_n <= kSmallBin) return RaggedKernel::kRegisters;
  if (ragged_kernel_applies<T>(RaggedKernel::kLazy, max_n)) return RaggedKernel::kBinned;
  TORCH_CHECK_VALUE(ragged_kernel_applies<T>(RaggedKernel::kShared, max_n), kPotrfV,
                    ": max_n = ", std::to_string(max_n),
                    " is larger than the CUDA kernels support (pass a tighter max_n)");
  return RaggedKernel::kShared;
}

template <typename T, int NP>
void launch_registers_ragged(const T* A, T* L, int* info, int64_t count, RaggedLayout lay,
                             bool upper, cudaStream_t stream) {
  constexpr int kPerBlock = 128 / NP;
  const size_t smem = sizeof(T) * kPerBlock * NP * (NP + 1);
  auto kernel = potrf_ragged_registers_kernel<T, NP>;
  allow_dynamic_smem(kernel, smem);
  kernel<<<ceil_div(count, kPerBlock), 128, smem, stream>>>(A, L, info, count, lay, upper);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// The registers kernel over the sizes 0..max_small, one launch per padded order, each
// serving its bin (lay.lo / lay.hi), so that a matrix runs at the smallest order that
// holds it: a single launch at max_small's order put 32 lanes on each 3 x 3 matrix of a
// skewed batch (H100: 0.42 ms against 0.18 for per-size torch calls, 50,000 float64
// matrices). The first bin starts at 0, which also gives it the invalid matrices.
template <typename T>
void launch_registers_bins(const T* A, T* L, int* info, int64_t count, RaggedLayout lay,
                           int max_small, bool upper, cudaStream_t stream) {
  lay.lo = 0;
  lay.hi = 4;
  launch_registers_ragged<T, 4>(A, L, info, count, lay, upper, stream);
  if (max_small <= 4) return;
  lay.lo = 5;
  lay.hi = 8;
  launch_registers_ragged<T, 8>(A, L, info, count, lay, upper, stream);
  if (max_small <= 8) return;
  lay.lo = 9;
  lay.hi = 16;
  launch_registers_ragged<T, 16>(A, L, info, count, lay, upper, stream);
  if (max_small <= 16) return;
  lay.lo = 17;
  lay.hi = kSmallBin;
  launch_registers_ragged<T, kSmallBin>(A, L, info, count, lay, upper, stream);
}

template <typename T>
void launch_ragged(const T* A, T* L, int* info, const RaggedBatch& rb, bool upper,
                   cudaStream_t stream) {
  const int max_n = static_cast<int>(rb.max_n);
  RaggedLayout lay{rb.offsets.const_data_ptr<int64_t>(), rb.sizes.const_data_ptr<int>(),
                   rb.status.defined() ? rb.status.const_data_ptr<int>() : nullptr, 0, false};
  switch (choose_ragged_kernel<T>(max_n)) {
    case RaggedKernel::kRegisters:
      return launch_registers_bins(A, L, info, rb.count, lay, max_n, upper, stream);
    case RaggedKernel::kShared:
      return launch_shared_layout(A, L, info, rb.count, lay, max_n, upper, stream);
    case RaggedKernel::kGreedy:
      return launch_blocked_layout(A, L, info, rb.count, lay, max_n, upper, stream);
    case RaggedKernel::kLazy:
      lay.steps = (max_n + kPanel - 1) / kPanel;
      lay.lazy = true;
      return launch_blocked_layout(A, L, info, rb.count, lay, max_n, upper, stream);
    case RaggedKernel::kBinned: {
      launch_registers_bins(A, L, info, rb.count, lay, kSmallBin, upper, stream);
      lay.lo = kSmallBin + 1;
      lay.steps = (max_n + kPanel - 1) / kPanel;
      lay.lazy = true;
      return launch_blocked_layout(A, L, info, rb.count, lay, max_n, upper, stream);
    }
  }
}

}  // namespace

void launch_potrf_ragged(const at::Tensor& A, at::Tensor& L, at::Tensor& info,
                         const RaggedBatch& rb, bool upper) {
  if (rb.count == 0) return;
  TORCH_CHECK(rb.count <= INT32_MAX, kPotrfV, ": batch too large for one launch");
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES(A.scalar_type(), "batchchol_potrf_vbatched_cuda", [&] {
    launch_ragged<scalar_t>(A.const_data_ptr<scalar_t>(), L.mutable_data_ptr<scalar_t>(),
                            info.mutable_data_ptr<int>(), rb, upper, stream);
  });
}

}  // namespace cuda

std::tuple<at::Tensor, at::Tensor> potrf_vbatched_cuda(const at::Tensor& A, const at::Tensor& n,
                                                       const at::Tensor& offsets,
                                                       c10::optional<int64_t> max_n, bool upper) {
  check_ragged_matrices(kPotrfV, "A", A, n, offsets);
  const c10::cuda::OptionalCUDAGuard guard(A.device());
  const RaggedBatch rb = prepare_ragged(kPotrfV, A, n, offsets, max_n);
  const at::Tensor Ac = A.contiguous();
  at::Tensor L = at::zeros_like(Ac);
  at::Tensor info = at::empty({rb.count}, A.options().dtype(at::kInt));
  cuda::launch_potrf_ragged(Ac, L, info, rb, upper);
  return {L, info};
}

TORCH_LIBRARY_IMPL(batchchol, CUDA, m) { m.impl("potrf_vbatched", &potrf_vbatched_cuda); }

}  // namespace batchchol
