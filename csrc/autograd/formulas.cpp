#include "autograd/formulas.h"

#include <ATen/ExpandUtils.h>

#include "common/dispatch_api.h"

namespace batchchol {
namespace autograd {

namespace {

at::Tensor hermitian_part(const at::Tensor& G) { return 0.5 * (G + G.mH()); }

at::Tensor triangle(const at::Tensor& G, bool upper, bool strict = false) {
  return upper ? G.triu(strict ? 1 : 0) : G.tril(strict ? -1 : 0);
}

}  // namespace

at::Tensor reduce_to(const at::Tensor& grad, c10::SymIntArrayRef shape) {
  return at::sum_to(grad, shape);
}

at::Tensor potrf_backward(const at::Tensor& gL_in, const at::Tensor& L_in, bool upper) {
  // Work with the lower factor: U = L^H for upper.
  const at::Tensor L = upper ? L_in.mH() : L_in;
  // Only the referenced triangle of the factor depends on A.
  const at::Tensor gL = upper ? gL_in.triu().mH() : gL_in.tril();
  // dL = L Phi(L^{-1} dA L^{-H}), Phi = lower triangle with the diagonal halved, so
  // gA = L^{-H} Phi(L^H gL) L^{-1} (then Hermitian part).
  at::Tensor P = at::matmul(L.mH(), gL).tril();
  P = P - 0.5 * at::diag_embed(P.diagonal(0, -2, -1));
  at::Tensor Y = api::trsm(L, P, /*upper=*/false, /*left=*/true, /*transpose=*/true, false);
  at::Tensor gA = api::trsm(L, Y, /*upper=*/false, /*left=*/false, /*transpose=*/false, false);
  return hermitian_part(gA);
}

at::Tensor factor_grad_from_solve(const at::Tensor& gB, const at::Tensor& X, const at::Tensor& L,
                                  bool upper) {
  // A = L L^H (U^H U), gA = -gB X^H; through the factor: gL = (gA + gA^H) L and
  // gU = U (gA + gA^H), each restricted to the triangle the op reads.
  at::Tensor S = at::matmul(gB, X.mH());
  S = -(S + S.mH());
  at::Tensor g = upper ? at::matmul(L, S) : at::matmul(S, L);
  return reduce_to(triangle(g, upper), L.sym_sizes());
}

std::tuple<at::Tensor, at::Tensor> trsm_backward(const at::Tensor& gX, const at::Tensor& A,
                                                 const at::Tensor& X, bool upper, bool left,
                                                 bool transpose, bool unit_diagonal, bool need_gA,
                                                 bool need_gB) {
  // left: op(A) X = B  => gB = op(A)^{-H} gX, g_op(A) = -gB X^H
  // right: X op(A) = B => gB = gX op(A)^{-H}, g_op(A) = -X^H gB
  at::Tensor gB = api::trsm(A, gX, upper, left, !transpose, unit_diagonal);
  at::Tensor gA;
  if (need_gA) {
    at::Tensor g_op = left ? -at::matmul(gB, X.mH()) : -at::matmul(X.mH(), gB);
    gA = transpose ? g_op.mH() : g_op;
    gA = reduce_to(triangle(gA, upper, /*strict=*/unit_diagonal), A.sym_sizes());
  }
  return {gA, need_gB ? gB : at::Tensor()};
}

}  // namespace autograd
}  // namespace batchchol
