// Instantiations of the warp family's posv kernels for double. One unit per op and dtype:
// the fully unrolled kernels are the slowest part of the build, and units compile in
// parallel.
#include "cuda/warp_chol_launch.cuh"

namespace batchchol {
namespace cuda {

bool launch_posv_warp(const double* A, const double* B, double* X, double* L, int* info, int64_t batch,
                      int n, int k, bool upper, cudaStream_t stream) {
  return launch_posv_warp_impl(A, B, X, L, info, batch, n, k, upper, stream);
}

}  // namespace cuda
}  // namespace batchchol
