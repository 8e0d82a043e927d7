// Triangular and Cholesky solves of a single large system on cuBLAS / cuSOLVER through
// ATen (solve_single.cu).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace batchchol {
namespace cuda {

// Whether a solve of `batch` systems (after broadcasting) of order n goes to ATen: one
// system, n >= 192, unless BATCHCHOL_SOLVE_SINGLE=0, a trsm / potrs family is forced
// (BATCHCHOL_TRSM_KERNEL), MAGMA is torch's preferred linalg library, or the current
// stream is capturing a CUDA graph.
bool solve_single_applies(int64_t batch, int64_t n);

// The ops' results for such a call, contiguous, in the ops' output shapes.
at::Tensor potrs_single(const at::Tensor& L, const at::Tensor& B, bool upper);
at::Tensor trsm_single(const at::Tensor& A, const at::Tensor& B, bool upper, bool left,
                       bool transpose, bool unit_diagonal);

}  // namespace cuda
}  // namespace batchchol
