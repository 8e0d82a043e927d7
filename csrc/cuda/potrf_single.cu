// potrf of a single matrix on cuSOLVER's dense potrf (through ATen) where the size
// dispatch would run the multi-launch blocked family.
//
// Why: the blocked family spreads a batch over the GPU by matrices; one matrix leaves
// it latency-bound, ~2 launches per 32-column panel step, each a few blocks that wait on
// their loads and their diagonal chain. H100, 2026-11-25 (tools/offgrid_potrf.py, one
// matrix; KERNEL-NOTES, twenty-seventh round): float64 n = 192 0.152 ms against
// torch.linalg.cholesky_ex's 0.112, 256 0.211 vs 0.140, 512 0.552 vs 0.248, 1024 1.140
// vs 0.470, 2048 2.458 vs 1.004; float32 384 0.305 vs 0.167, 512 0.413 vs 0.219. At
// four matrices the batched kernels win again (float64 256: 0.221 vs 0.300 ms, 512:
// 0.587 vs 0.651), where torch's batched backends run. torch itself sends one matrix to
// cuSOLVER's single-matrix potrf, which uses the whole GPU on it.
#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGraphsC10Utils.h>
#include <c10/util/complex.h>

#include <climits>
#include <cstdlib>

#include "common/single_system.h"
#include "cuda/potrf_launch.h"
#include "cuda/potrf_single.h"

namespace batchchol {
namespace cuda {

namespace {

// Smallest order routed (the blocked family starts at float64 129, float32 321; at
// float64 n = 128 the blocked family took 0.098 ms against cuSOLVER's 0.080).
constexpr int64_t kSingleMinN = 128;

template <typename T>
__device__ __forceinline__ bool real_part_finite(T v) {
  return isfinite(v);
}
template <typename T>
__device__ __forceinline__ bool real_part_finite(c10::complex<T> v) {
  return isfinite(v.real());
}

// info of the one matrix by the library's convention: cuSOLVER reports a pivot that is
// not positive, but a NaN pivot compares false and passes, spreading NaNs to every later
// pivot; the first non-finite diagonal entry of L is where a NaN or Inf reached the
// pivots (LAPACK's potrf reports NaN pivots too). Entries past a failed pivot are never
// read: info is the smaller of the two. A failed factor gets a NaN at its failed pivot,
// as the library's kernels leave one: cuSOLVER stops there and leaves the rest of A,
// finite, which must not pass for a factor.
template <typename T>
__global__ void __launch_bounds__(256) single_info_kernel(T* L, const int* solver_info, int* info,
                                                          int64_t n) {
  __shared__ int first;
  if (threadIdx.x == 0) first = INT_MAX;
  __syncthreads();
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    if (!real_part_finite(L[j * (n + 1)])) {
      atomicMin(&first, static_cast<int>(j) + 1);
      break;
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    const int s = *solver_info;
    const int k = s > 0 && s < first ? s : first;
    *info = k == INT_MAX ? 0 : k;
    if (k != INT_MAX) L[(k - 1) * (n + 1)] = T(NAN);
  }
}

}  // namespace

bool potrf_single_applies(const at::Tensor& A, int64_t batch, int64_t n) {
  if (batch != 1 || n < kSingleMinN || std::getenv("BATCHCHOL_POTRF_KERNEL")) return false;
  if (single_route_off("BATCHCHOL_POTRF_SINGLE")) return false;
  // With MAGMA preferred, torch's single-matrix potrf is MAGMA's hybrid one, which
  // synchronizes with the host: keep the library's own kernels.
  if (at::globalContext().linalgPreferredBackend() == at::LinalgBackend::Magma) return false;
  // Under CUDA-graph capture the library's kernels, whose capture the tests check.
  if (c10::cuda::currentStreamCaptureStatusMayInitCtx() != c10::cuda::CaptureStatus::None)
    return false;
  bool candidate = false;
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES(A.scalar_type(), "batchchol_potrf_single", [&] {
    candidate = potrf_single_candidate<scalar_t>(static_cast<int>(n));
  });
  return candidate;
}

void potrf_single(const at::Tensor& A, bool upper, at::Tensor& L, at::Tensor& info) {
  const int64_t n = A.size(-1);
  // check_errors = false: info stays on the device, no host sync.
  const auto [factor, solver_info] = at::linalg_cholesky_ex(A, upper, /*check_errors=*/false);
  L.view(factor.sizes()).copy_(factor);  // cuSOLVER's result is column-major
  const at::Tensor sinfo = solver_info.to(at::kInt).contiguous();
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES(A.scalar_type(), "batchchol_potrf_single_info", [&] {
    single_info_kernel<scalar_t><<<1, 256, 0, stream>>>(L.mutable_data_ptr<scalar_t>(),
                                                        sinfo.const_data_ptr<int>(),
                                                        info.mutable_data_ptr<int>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

}  // namespace cuda
}  // namespace batchchol
