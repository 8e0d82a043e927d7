// Backend entry points of the batchchol ops. Semantics (shared by every backend):
//
// potrf(A [*, n, n], upper) -> (L [*, n, n], info int32 [*])
//   Reads only the lower (upper) triangle of A (Hermitian for complex; the imaginary
//   part of the diagonal is ignored). L is contiguous with the other triangle zeroed,
//   A = L L^H (A = U^H U). info = 0: factored; k > 0: the leading minor of order k is
//   not positive definite, or a NaN/Inf reached pivot k; L of such a matrix is
//   unspecified (it holds NaN/Inf) and never affects other matrices. No host sync.
// potrs(L [*, n, n], B [*, n, k], upper) -> X: solves (L L^H) X = B (U^H U X = B),
//   reading only the given triangle of L; batch dims broadcast.
// posv(A, B, upper) -> (X, L, info): potrf then potrs; L, info have A's batch shape,
//   X the broadcast shape. X of a failed matrix is unspecified (NaN/Inf).
// posv_solve(A, B, upper) -> (X, info): posv's X and info; the factor is not returned
//   (and, where the fused kernels hold it on chip, never written to memory).
// trsm(A [*, n, n], B, upper, left, transpose, unit_diagonal) -> X:
//   left:  op(A) X = B with B [*, n, k];  right: X op(A) = B with B [*, k, n];
//   op(A) = A^H if transpose else A; A is lower (upper) triangular, only that
//   triangle is read; unit_diagonal treats the diagonal as ones without reading it.
#pragma once

#include <ATen/ATen.h>

#include <tuple>

namespace batchchol {

constexpr const char* kPotrf = "batchchol.potrf";
constexpr const char* kPotrs = "batchchol.potrs";
constexpr const char* kPosv = "batchchol.posv";
constexpr const char* kPosvSolve = "batchchol.posv_solve";
constexpr const char* kTrsm = "batchchol.trsm";

std::tuple<at::Tensor, at::Tensor> potrf_cpu(const at::Tensor& A, bool upper);
at::Tensor potrs_cpu(const at::Tensor& L, const at::Tensor& B, bool upper);
std::tuple<at::Tensor, at::Tensor, at::Tensor> posv_cpu(const at::Tensor& A, const at::Tensor& B,
                                                        bool upper);
std::tuple<at::Tensor, at::Tensor> posv_solve_cpu(const at::Tensor& A, const at::Tensor& B,
                                                  bool upper);
at::Tensor trsm_cpu(const at::Tensor& A, const at::Tensor& B, bool upper, bool left,
                    bool transpose, bool unit_diagonal);

std::tuple<at::Tensor, at::Tensor> potrf_cuda(const at::Tensor& A, bool upper);
at::Tensor potrs_cuda(const at::Tensor& L, const at::Tensor& B, bool upper);
std::tuple<at::Tensor, at::Tensor, at::Tensor> posv_cuda(const at::Tensor& A,
                                                         const at::Tensor& B, bool upper);
std::tuple<at::Tensor, at::Tensor> posv_solve_cuda(const at::Tensor& A, const at::Tensor& B,
                                                   bool upper);
at::Tensor trsm_cuda(const at::Tensor& A, const at::Tensor& B, bool upper, bool left,
                     bool transpose, bool unit_diagonal);

}  // namespace batchchol
