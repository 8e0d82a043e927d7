#include "autograd/vbatched_formulas.h"

#include "common/dispatch_api_vbatched.h"
#include "common/ops_vbatched.h"
#include "common/ragged.h"

namespace batchchol {
namespace autograd {

namespace {

// Per-matrix transforms of n_i x n_i blocks at r.offsets.
at::Tensor tri(const at::Tensor& X, const Ragged& r, int64_t mode) {
  return api::tri_vbatched(X, r.n, r.offsets, mode, r.max_n);
}

at::Tensor mH(const at::Tensor& X, const Ragged& r) {
  return tri(X, r, kTriTranspose).conj().resolve_conj();
}

// The triangle of G that an op reading `upper`'s triangle depends on.
at::Tensor keep_triangle(const at::Tensor& G, bool upper, const Ragged& r) {
  return upper ? mH(tri(mH(G, r), r, kTriLower), r) : tri(G, r, kTriLower);
}

// C = op(P) op(Q) for n_i x n_i results at r.offsets. Dimensions: kSizeN or r.k.
at::Tensor gemm(const at::Tensor& P, const at::Tensor& p_off, int64_t pr, int64_t pc, bool pt,
                const at::Tensor& Q, const at::Tensor& q_off, int64_t qr, int64_t qc, bool qt,
                const at::Tensor& like, const Ragged& r) {
  return api::gemm_vbatched(P, p_off, pr, pc, pt, Q, q_off, qr, qc, qt, r.n, r.offsets,
                            like.sym_numel(), r.max_n);
}

at::Tensor square(const at::Tensor& P, bool pt, const at::Tensor& Q, bool qt, const Ragged& r) {
  return gemm(P, r.offsets, kSizeN, kSizeN, pt, Q, r.offsets, kSizeN, kSizeN, qt, P, r);
}

// gB X^H for right-hand-side blocks n_i x k (left) or X^H gB for k x n_i (right).
at::Tensor outer(const at::Tensor& gB, const at::Tensor& X, const at::Tensor& like, bool left,
                 const Ragged& r) {
  const int64_t k = r.k < 0 ? kSizeN : r.k;
  if (left) return gemm(gB, r.b_offsets, kSizeN, k, false, X, r.b_offsets, kSizeN, k, true, like, r);
  return gemm(X, r.b_offsets, k, kSizeN, true, gB, r.b_offsets, k, kSizeN, false, like, r);
}

}  // namespace

at::Tensor potrf_vbatched_backward(const at::Tensor& gL_in, const at::Tensor& L_in, bool upper,
                                   const Ragged& r) {
  // As potrf_backward: gA = herm(L^{-H} Phi(L^H gL) L^{-1}) with the lower factor.
  const at::Tensor L = upper ? mH(L_in, r) : L_in;
  const at::Tensor gL = upper ? tri(mH(gL_in, r), r, kTriLower) : tri(gL_in, r, kTriLower);
  const at::Tensor P = tri(square(L, true, gL, false, r), r, kTriPhi);
  const at::Tensor Y = api::trsm_vbatched(L, r.n, r.offsets, P, r.offsets, -1, r.max_n,
                                          /*upper=*/false, /*left=*/true, /*transpose=*/true,
                                          false);
  const at::Tensor gA = api::trsm_vbatched(L, r.n, r.offsets, Y, r.offsets, -1, r.max_n,
                                           /*upper=*/false, /*left=*/false, /*transpose=*/false,
                                           false);
  return tri(gA, r, kTriHermitianPart);
}

at::Tensor solve_with_factor_vbatched(const at::Tensor& L, const at::Tensor& G, bool upper,
                                      const Ragged& r) {
  return api::potrs_vbatched(L, r.n, r.offsets, G, r.b_offsets, r.k, r.max_n, upper);
}

at::Tensor factor_grad_from_solve_vbatched(const at::Tensor& gB, const at::Tensor& X,
                                           const at::Tensor& L, bool upper, const Ragged& r) {
  // S = -(gB X^H + X gB^H); gL = S L (lower) or gU = U S (upper), on the triangle.
  at::Tensor S = outer(gB, X, L, /*left=*/true, r);
  S = -(S + mH(S, r));
  const at::Tensor g = upper ? square(L, false, S, false, r) : square(S, false, L, false, r);
  return keep_triangle(g, upper, r);
}

at::Tensor matrix_grad_from_solve_vbatched(const at::Tensor& gB, const at::Tensor& X,
                                           const at::Tensor& A, const Ragged& r) {
  return -tri(outer(gB, X, A, /*left=*/true, r), r, kTriHermitianPart);
}

std::tuple<at::Tensor, at::Tensor> trsm_vbatched_backward(
    const at::Tensor& gX, const at::Tensor& A, const at::Tensor& X, bool upper, bool left,
    bool transpose, bool unit_diagonal, bool need_gA, bool need_gB, const Ragged& r) {
  const at::Tensor gB = api::trsm_vbatched(A, r.n, r.offsets, gX, r.b_offsets, r.k, r.max_n,
                                           upper, left, !transpose, unit_diagonal);
  at::Tensor gA;
  if (need_gA) {
    at::Tensor g_op = -outer(gB, X, A, left, r);
    if (transpose) g_op = mH(g_op, r);
    gA = keep_triangle(g_op, upper, r);
    // The diagonal is not read: drop it (diag(G) = 2 (lower(G) - Phi(G))).
    if (unit_diagonal) gA = gA - 2.0 * (tri(gA, r, kTriLower) - tri(gA, r, kTriPhi));
  }
  return {gA, need_gB ? gB : at::Tensor()};
}

}  // namespace autograd
}  // namespace batchchol
