// Whether a CUDA solve goes to cuBLAS / cuSOLVER through ATen (solve_single.cu,
// common/single_system.h).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "common/single_system.h"  // potrs_single, trsm_single

namespace batchchol {
namespace cuda {

// Whether a solve of `batch` systems (after broadcasting) of order n goes to ATen: one
// system, n >= 192, unless BATCHCHOL_SOLVE_SINGLE=0, a trsm / potrs family is forced
// (BATCHCHOL_TRSM_KERNEL), MAGMA is torch's preferred linalg library, or the current
// stream is capturing a CUDA graph.
bool solve_single_applies(int64_t batch, int64_t n);

}  // namespace cuda
}  // namespace batchchol
