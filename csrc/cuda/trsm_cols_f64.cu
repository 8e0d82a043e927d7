// Column-per-lane trsm / potrs kernels for double. One unit per dtype so that they
// compile in parallel.
#include "cuda/trsm_cols_kernels.cuh"

namespace batchchol {
namespace cuda {

void launch_trsm_cols(const double* A, int64_t a_stride, const double* B, double* X, int64_t batch,
                      int64_t k, const TrsmView& v, cudaStream_t stream) {
  launch_trsm_cols_impl(A, a_stride, B, X, batch, k, v, stream);
}

void launch_potrs_cols(const double* L, int64_t l_stride, const double* B, double* X, int64_t batch,
                       int64_t k, const TrsmView& v1, const TrsmView& v2, cudaStream_t stream) {
  launch_potrs_cols_impl(L, l_stride, B, X, batch, k, v1, v2, stream);
}

}  // namespace cuda
}  // namespace batchchol
