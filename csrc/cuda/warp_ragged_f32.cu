// Instantiations of the warp family's ragged potrf kernels for float (one unit per dtype,
// as warp_potrf_f32.cu: sixteen fully unrolled orders per unit).
#include "cuda/warp_chol_launch.cuh"

namespace batchchol {
namespace cuda {

void launch_potrf_warp_groups(const float* A, float* L, int* info, const RaggedBatch& rb,
                              const SizeGroups& sg, bool upper, cudaStream_t stream) {
  launch_potrf_warp_groups_impl(A, L, info, rb, sg, upper, stream);
}

}  // namespace cuda
}  // namespace batchchol
