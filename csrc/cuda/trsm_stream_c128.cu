// Streaming trsm / potrs kernels for c10::complex<double>.
// One instantiation unit per dtype, so that they compile in parallel.
#include "cuda/trsm_stream_kernels.cuh"

namespace batchchol {
namespace cuda {

BATCHCHOL_DEFINE_STREAM(c10::complex<double>)

}  // namespace cuda
}  // namespace batchchol
