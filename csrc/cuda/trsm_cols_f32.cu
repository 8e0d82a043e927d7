// Column-per-lane trsm / potrs kernels for float.
// One instantiation unit per dtype, so that they compile in parallel.
#include "cuda/trsm_cols_kernels.cuh"

namespace batchchol {
namespace cuda {

BATCHCHOL_DEFINE_COLS(float)

}  // namespace cuda
}  // namespace batchchol
