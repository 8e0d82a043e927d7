// Instantiations of the warp family's ragged potrf and posv kernels for float (one unit per dtype,
// as warp_potrf_f32.cu: sixteen fully unrolled orders per unit).
#include "cuda/warp_chol_launch.cuh"

namespace batchchol {
namespace cuda {

void launch_potrf_warp_groups(const float* A, float* L, int* info, const RaggedBatch& rb,
                              const SizeGroups& sg, bool upper, const LaunchStreams& streams) {
  launch_potrf_warp_groups_impl(A, L, info, rb, sg, upper, streams);
}

bool launch_potrf_warp_one(const float* A, float* L, int* info, const RaggedPrologue& p,
                           bool upper, cudaStream_t stream) {
  return launch_potrf_warp_one_impl(A, L, info, p, upper, stream);
}

void launch_posv_warp_groups(const float* A, const float* B, float* X, float* L, int* info,
                             const RaggedBatch& rb, const SizeGroups& sg, int64_t k, bool upper,
                             const LaunchStreams& streams) {
  launch_posv_warp_groups_impl(A, B, X, L, info, rb, sg, k, upper, streams);
}

bool launch_potrf_warp64_group(const float* A, float* L, int* info, const RaggedBatch& rb,
                               const SizeGroups& sg, int g, bool upper, cudaStream_t stream) {
  return launch_potrf_warp64_group_impl(A, L, info, rb, sg, g, upper, stream);
}

}  // namespace cuda
}  // namespace batchchol
