// Backend entry points of the ragged-batch ops (layout and validation: ragged.h).
//
// potrf_vbatched(A, n, offsets, max_n, upper) -> (L, info int32 [count])
//   L has A's layout: each block holds its factor with the other triangle zeroed;
//   elements outside every block are 0. info as potrf's, or a RaggedStatus (< 0) for a
//   matrix whose GPU-side metadata is invalid (host metadata raises instead).
// potrs_vbatched(L, n, offsets, B, b_offsets, k, max_n, upper) -> X (B's layout)
// posv_vbatched(A, n, offsets, B, b_offsets, k, max_n, upper) -> (X, L, info)
// trsm_vbatched(A, n, offsets, B, b_offsets, k, max_n, upper, left, transpose,
//               unit_diagonal) -> X: blocks n_i x k (left) or k x n_i (right).
// k = -1 gives every system an n_i x n_i right-hand side (the autograd formulas use it).
// The X block of a system with invalid GPU-side metadata is NaN (when its own
// right-hand-side block is in range).
#pragma once

#include <ATen/ATen.h>
#include <c10/util/Optional.h>

#include <tuple>

namespace batchchol {

#define BATCHCHOL_VBATCHED_DECLS(dev)                                                          \
  std::tuple<at::Tensor, at::Tensor> potrf_vbatched_##dev(                                     \
      const at::Tensor& A, const at::Tensor& n, const at::Tensor& offsets,                     \
      c10::optional<int64_t> max_n, bool upper);                                               \
  at::Tensor potrs_vbatched_##dev(const at::Tensor& L, const at::Tensor& n,                    \
                                  const at::Tensor& offsets, const at::Tensor& B,              \
                                  const at::Tensor& b_offsets, int64_t k,                      \
                                  c10::optional<int64_t> max_n, bool upper);                   \
  std::tuple<at::Tensor, at::Tensor, at::Tensor> posv_vbatched_##dev(                          \
      const at::Tensor& A, const at::Tensor& n, const at::Tensor& offsets, const at::Tensor& B, \
      const at::Tensor& b_offsets, int64_t k, c10::optional<int64_t> max_n, bool upper);       \
  at::Tensor trsm_vbatched_##dev(const at::Tensor& A, const at::Tensor& n,                     \
                                 const at::Tensor& offsets, const at::Tensor& B,               \
                                 const at::Tensor& b_offsets, int64_t k,                       \
                                 c10::optional<int64_t> max_n, bool upper, bool left,          \
                                 bool transpose, bool unit_diagonal);                          \
  at::Tensor gemm_vbatched_##dev(const at::Tensor& P, const at::Tensor& p_offsets,             \
                                 int64_t p_rows, int64_t p_cols, bool p_conj_trans,            \
                                 const at::Tensor& Q, const at::Tensor& q_offsets,             \
                                 int64_t q_rows, int64_t q_cols, bool q_conj_trans,            \
                                 const at::Tensor& n, const at::Tensor& c_offsets,             \
                                 int64_t c_numel, c10::optional<int64_t> max_n);               \
  at::Tensor tri_vbatched_##dev(const at::Tensor& X, const at::Tensor& n,                      \
                                const at::Tensor& offsets, int64_t mode,                       \
                                c10::optional<int64_t> max_n);

BATCHCHOL_VBATCHED_DECLS(cpu)
BATCHCHOL_VBATCHED_DECLS(cuda)
#undef BATCHCHOL_VBATCHED_DECLS

enum TriMode : int64_t { kTriLower = 0, kTriPhi = 1, kTriHermitianPart = 2, kTriTranspose = 3 };

// Checks of the helper ops shared by every backend; returns the C block shape.
void check_gemm_vbatched(const at::Tensor& P, const at::Tensor& p_offsets, int64_t p_rows,
                         int64_t p_cols, bool p_conj_trans, const at::Tensor& Q,
                         const at::Tensor& q_offsets, int64_t q_rows, int64_t q_cols,
                         bool q_conj_trans, const at::Tensor& n, const at::Tensor& c_offsets);
void check_tri_vbatched(const at::Tensor& X, const at::Tensor& n, const at::Tensor& offsets,
                        int64_t mode);

}  // namespace batchchol
