// Launchers of the batched triangular-solve kernels, callable from plain C++ (or
// other .cu files) that already hold flattened, contiguous tensors, e.g. posv
// after its factorization. They launch on at::cuda::getCurrentCUDAStream() of
// the tensors' device, never synchronize the host (CUDA-graph safe), and do no
// input validation beyond internal-consistency TORCH_CHECKs: the caller has run
// the op checks of common/checks.h. Empty problems (batch, n or k = 0) launch nothing.
#pragma once

#include <ATen/ATen.h>

namespace batchchol {

// Solves (L L^H) X = B (upper: U^H U X = B) for every system s of the batch.
//   L: [batch_a, n, n] contiguous; system s uses L + s * l_stride elements
//      (l_stride = n*n for one factor per system, 0 for one factor shared by all).
//      Only the lower (upper) triangle is read; the other one may hold anything.
//   B: [batch, n, k] contiguous.
//   X: [batch, n, k] contiguous, same dtype/device; may be the same tensor as B
//      (in-place), must not otherwise overlap B.
// One fused kernel: both substitutions of a system run in the same warp.
void launch_potrs(const at::Tensor& L, int64_t l_stride, const at::Tensor& B, at::Tensor& X,
                  bool upper);

// trsm on flattened tensors, same conventions as launch_potrs:
//   A: [batch_a, n, n] contiguous, a_stride as l_stride above.
//   left:  op(A) X = B, B and X [batch, n, k];  right: X op(A) = B, B and X [batch, k, n];
//   op(A) = A^H if transpose else A; unit_diagonal: the diagonal is 1 and never read.
// X may be the same tensor as B (in-place).
void launch_trsm(const at::Tensor& A, int64_t a_stride, const at::Tensor& B, at::Tensor& X,
                 bool upper, bool left, bool transpose, bool unit_diagonal);

}  // namespace batchchol
