// Panel trsm / potrs kernels for double.
// One instantiation unit per dtype, so that they compile in parallel.
#include "cuda/trsm_panel_kernels.cuh"

namespace batchchol {
namespace cuda {

BATCHCHOL_DEFINE_PANEL(double)

}  // namespace cuda
}  // namespace batchchol
