// Block-per-system trsm / potrs kernels for double.
// One instantiation unit per dtype, so that they compile in parallel.
#include "cuda/trsm_block_kernels.cuh"

namespace batchchol {
namespace cuda {

BATCHCHOL_DEFINE_BLOCK(double)

}  // namespace cuda
}  // namespace batchchol
