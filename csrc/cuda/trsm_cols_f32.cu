// Column-per-lane trsm / potrs kernels for float. One unit per dtype so that they
// compile in parallel.
#include "cuda/trsm_cols_kernels.cuh"

namespace batchchol {
namespace cuda {

void launch_trsm_cols(const float* A, int64_t a_stride, const float* B, float* X, int64_t batch,
                      int64_t k, const TrsmView& v, cudaStream_t stream) {
  launch_trsm_cols_impl(A, a_stride, B, X, batch, k, v, stream);
}

void launch_potrs_cols(const float* L, int64_t l_stride, const float* B, float* X, int64_t batch,
                       int64_t k, const TrsmView& v1, const TrsmView& v2, cudaStream_t stream) {
  launch_potrs_cols_impl(L, l_stride, B, X, batch, k, v1, v2, stream);
}

}  // namespace cuda
}  // namespace batchchol
