// Instantiations of the warp family's potrf kernels for float. One unit per op and dtype:
// the fully unrolled kernels are the slowest part of the build, and units compile in
// parallel.
#include "cuda/warp_chol_launch.cuh"

namespace batchchol {
namespace cuda {

void launch_potrf_warp(const float* A, float* L, int* info, int64_t batch, int n, bool upper,
                       cudaStream_t stream) {
  launch_potrf_warp_impl(A, L, info, batch, n, upper, stream);
}

}  // namespace cuda
}  // namespace batchchol
