// Backward formulas of the batchchol ops. They are written with differentiable
// operations only (the batchchol ops through the dispatcher, and ATen), so the
// gradients are themselves differentiable: gradgradcheck and Hessians work.
#pragma once

#include <ATen/ATen.h>

namespace batchchol {
namespace autograd {

// Gradient of A from the gradient of its Cholesky factor (torch.linalg's convention:
// the Hermitian gradient, as A is taken to be Hermitian).
at::Tensor potrf_backward(const at::Tensor& gL, const at::Tensor& L, bool upper);

// Gradient of the factor L of potrs/posv from gA = -gB X^H, restricted to the
// triangle that the op reads.
at::Tensor factor_grad_from_solve(const at::Tensor& gB, const at::Tensor& X,
                                  const at::Tensor& L, bool upper);

// Gradients of trsm's A and B; either may be skipped (undefined result).
std::tuple<at::Tensor, at::Tensor> trsm_backward(const at::Tensor& gX, const at::Tensor& A,
                                                 const at::Tensor& X, bool upper, bool left,
                                                 bool transpose, bool unit_diagonal,
                                                 bool need_gA, bool need_gB);

// Sums a gradient of a broadcast input back to the input's shape.
at::Tensor reduce_to(const at::Tensor& grad, c10::SymIntArrayRef shape);

}  // namespace autograd
}  // namespace batchchol
