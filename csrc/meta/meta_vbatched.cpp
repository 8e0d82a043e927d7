// Fake (Meta) kernels of the ragged-batch ops: the outputs keep the layout of their
// buffers (1-D, same length), so only the data-free checks run here.
#include <torch/library.h>

#include "common/ops_vbatched.h"
#include "common/ragged.h"

namespace batchchol {
namespace {

at::Tensor like(const at::Tensor& t) {
  return at::empty_symint(t.sym_sizes(), t.options().memory_format(at::MemoryFormat::Contiguous));
}

at::Tensor info_for(const at::Tensor& A, const at::Tensor& n) {
  return at::empty_symint({n.sym_size(0)}, A.options().dtype(at::kInt));
}

std::tuple<at::Tensor, at::Tensor> potrf_vbatched_meta(const at::Tensor& A, const at::Tensor& n,
                                                       const at::Tensor& offsets,
                                                       c10::optional<int64_t> /*max_n*/,
                                                       bool /*upper*/) {
  check_ragged_matrices(kPotrfV, "A", A, n, offsets);
  return {like(A), info_for(A, n)};
}

at::Tensor potrs_vbatched_meta(const at::Tensor& L, const at::Tensor& n, const at::Tensor& offsets,
                               const at::Tensor& B, const at::Tensor& b_offsets, int64_t k,
                               c10::optional<int64_t> /*max_n*/, bool /*upper*/) {
  check_ragged_matrices(kPotrsV, "L", L, n, offsets);
  check_ragged_rhs(kPotrsV, L, n, "B", B, b_offsets, k);
  return like(B);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> posv_vbatched_meta(
    const at::Tensor& A, const at::Tensor& n, const at::Tensor& offsets, const at::Tensor& B,
    const at::Tensor& b_offsets, int64_t k, c10::optional<int64_t> /*max_n*/, bool /*upper*/) {
  check_ragged_matrices(kPosvV, "A", A, n, offsets);
  check_ragged_rhs(kPosvV, A, n, "B", B, b_offsets, k);
  return {like(B), like(A), info_for(A, n)};
}

at::Tensor trsm_vbatched_meta(const at::Tensor& A, const at::Tensor& n, const at::Tensor& offsets,
                              const at::Tensor& B, const at::Tensor& b_offsets, int64_t k,
                              c10::optional<int64_t> /*max_n*/, bool /*upper*/, bool /*left*/,
                              bool /*transpose*/, bool /*unit_diagonal*/) {
  check_ragged_matrices(kTrsmV, "A", A, n, offsets);
  check_ragged_rhs(kTrsmV, A, n, "B", B, b_offsets, k);
  return like(B);
}

at::Tensor gemm_vbatched_meta(const at::Tensor& P, const at::Tensor& p_offsets, int64_t p_rows,
                              int64_t p_cols, bool p_conj_trans, const at::Tensor& Q,
                              const at::Tensor& q_offsets, int64_t q_rows, int64_t q_cols,
                              bool q_conj_trans, const at::Tensor& n,
                              const at::Tensor& c_offsets, c10::SymInt c_numel,
                              c10::optional<int64_t> /*max_n*/) {
  check_gemm_vbatched(P, p_offsets, p_rows, p_cols, p_conj_trans, Q, q_offsets, q_rows, q_cols,
                      q_conj_trans, n, c_offsets);
  return at::empty_symint({std::move(c_numel)}, P.options());
}

at::Tensor tri_vbatched_meta(const at::Tensor& X, const at::Tensor& n, const at::Tensor& offsets,
                             int64_t mode, c10::optional<int64_t> /*max_n*/) {
  check_tri_vbatched(X, n, offsets, mode);
  return like(X);
}

}  // namespace

TORCH_LIBRARY_IMPL(batchchol, Meta, m) {
  m.impl("potrf_vbatched", &potrf_vbatched_meta);
  m.impl("potrs_vbatched", &potrs_vbatched_meta);
  m.impl("posv_vbatched", &posv_vbatched_meta);
  m.impl("trsm_vbatched", &trsm_vbatched_meta);
  m.impl("_gemm_vbatched", &gemm_vbatched_meta);
  m.impl("_tri_vbatched", &tri_vbatched_meta);
}

}  // namespace batchchol
