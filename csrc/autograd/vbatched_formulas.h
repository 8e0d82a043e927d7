// Backward formulas of the ragged-batch ops: the formulas of formulas.h, written on
// ragged buffers with the vbatched solves and the two helper ops (_gemm_vbatched,
// _tri_vbatched). They are first-order only: the helper ops have no autograd.
#pragma once

#include <ATen/ATen.h>
#include <c10/util/Optional.h>

namespace batchchol {
namespace autograd {

// The metadata every formula needs: sizes, the matrices' and the right-hand sides'
// offsets, k (-1: n_i x n_i blocks) and max_n.
struct Ragged {
  at::Tensor n, offsets, b_offsets;
  int64_t k = 0;
  c10::optional<int64_t> max_n;
};

at::Tensor potrf_vbatched_backward(const at::Tensor& gL, const at::Tensor& L, bool upper,
                                   const Ragged& r);

// (L L^H)^{-1} G for right-hand-side blocks G (the gradient of B in potrs / posv).
at::Tensor solve_with_factor_vbatched(const at::Tensor& L, const at::Tensor& G, bool upper,
                                      const Ragged& r);

// Gradient of the factor from gB = (L L^H)^{-1} gX and X (potrs's gL), on the
// triangle the op reads.
at::Tensor factor_grad_from_solve_vbatched(const at::Tensor& gB, const at::Tensor& X,
                                           const at::Tensor& L, bool upper, const Ragged& r);

// Hermitian part of -gB X^H (posv's gA through X).
at::Tensor matrix_grad_from_solve_vbatched(const at::Tensor& gB, const at::Tensor& X,
                                           const at::Tensor& A, const Ragged& r);

std::tuple<at::Tensor, at::Tensor> trsm_vbatched_backward(
    const at::Tensor& gX, const at::Tensor& A, const at::Tensor& X, bool upper, bool left,
    bool transpose, bool unit_diagonal, bool need_gA, bool need_gB, const Ragged& r);

}  // namespace autograd
}  // namespace batchchol
