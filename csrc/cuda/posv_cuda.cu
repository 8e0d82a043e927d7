// POSV on CUDA: one fused kernel for n <= 32 (system in registers), potrf + potrs
// otherwise (and when A is broadcast over several right-hand-side batches).
#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/batching.h"
#include "common/checks.h"
#include "common/ops.h"
#include "cuda/launch_utils.h"
#include "cuda/posv_kernels.cuh"
#include "cuda/potrf_launch.h"
#include "cuda/trsm_launch.h"

namespace batchchol {
namespace cuda {
namespace {

template <typename T, int NP>
bool try_registers(const T* A, const T* B, T* X, T* L, int* info, int64_t batch, int n, int k,
                   bool upper, cudaStream_t stream) {
  constexpr int kPerBlock = 128 / NP;
  const size_t smem = sizeof(T) * kPerBlock * (static_cast<size_t>(n) * smem_pitch(n) +
                                               static_cast<size_t>(n) * k);
  if (smem > max_dynamic_smem()) return false;
  auto kernel = posv_registers_kernel<T, NP>;
  allow_dynamic_smem(kernel, smem);
  kernel<<<ceil_div(batch, kPerBlock), 128, smem, stream>>>(A, B, X, L, info, batch, n, k, upper);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return true;
}

// Returns false when the system does not fit on chip (the caller falls back).
template <typename T>
bool launch_posv_fused(const T* A, const T* B, T* X, T* L, int* info, int64_t batch, int n,
                       int k, bool upper, cudaStream_t stream) {
  if (n <= 2) return try_registers<T, 2>(A, B, X, L, info, batch, n, k, upper, stream);
  if (n <= 4) return try_registers<T, 4>(A, B, X, L, info, batch, n, k, upper, stream);
  if (n <= 8) return try_registers<T, 8>(A, B, X, L, info, batch, n, k, upper, stream);
  if (n <= 16) return try_registers<T, 16>(A, B, X, L, info, batch, n, k, upper, stream);
  if (n <= 32) return try_registers<T, 32>(A, B, X, L, info, batch, n, k, upper, stream);
  // Larger systems: potrf's blocked kernels and the fused potrs kernel (measured
  // faster on an H200 than one block per system with the matrix on chip).
  return false;
}

}  // namespace
}  // namespace cuda

std::tuple<at::Tensor, at::Tensor, at::Tensor> posv_cuda(const at::Tensor& A_in,
                                                         const at::Tensor& B_in, bool upper) {
  check_solve_op(kPosv, "A", A_in, "B", B_in, /*left=*/true);
  const c10::cuda::OptionalCUDAGuard guard(A_in.device());
  const SolveBatch sb = make_solve_batch(A_in, B_in);
  if (!sb.a_per_system || sb.batch > INT32_MAX || sb.cols > INT32_MAX) {
    auto [L, info] = potrf_cuda(A_in, upper);
    return {potrs_cuda(L, B_in, upper), L, info};
  }
  at::Tensor L = at::empty(A_in.sizes(), A_in.options().memory_format(at::MemoryFormat::Contiguous));
  std::vector<int64_t> batch_shape(A_in.sizes().begin(), A_in.sizes().end() - 2);
  at::Tensor info = at::empty(batch_shape, A_in.options().dtype(at::kInt));
  at::Tensor X = at::empty(sb.out_shape, B_in.options().memory_format(at::MemoryFormat::Contiguous));
  if (sb.batch == 0) return {X, L, info};
  if (sb.n == 0) {
    info.zero_();
    return {X, L, info};
  }
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES(sb.A.scalar_type(), "batchchol_posv_cuda", [&] {
    const scalar_t* a = sb.A.const_data_ptr<scalar_t>();
    scalar_t* l = L.mutable_data_ptr<scalar_t>();
    int* inf = info.mutable_data_ptr<int>();
    const int n = static_cast<int>(sb.n);
    if (sb.cols == 0) return cuda::launch_potrf<scalar_t>(a, l, inf, sb.batch, n, upper, stream);
    if (cuda::launch_posv_fused<scalar_t>(a, sb.B.const_data_ptr<scalar_t>(),
                                          X.mutable_data_ptr<scalar_t>(), l, inf, sb.batch, n,
                                          static_cast<int>(sb.cols), upper, stream)) {
      return;
    }
    cuda::launch_potrf<scalar_t>(a, l, inf, sb.batch, n, upper, stream);
    at::Tensor X_flat = X.view({sb.batch, sb.n, sb.cols});
    launch_potrs(L.view({sb.batch, sb.n, sb.n}), sb.n * sb.n, sb.B, X_flat, upper);
  });
  return {X, L, info};
}

TORCH_LIBRARY_IMPL(batchchol, CUDA, m) { m.impl("posv", &posv_cuda); }

}  // namespace batchchol
