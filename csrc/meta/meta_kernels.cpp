// Fake (Meta) kernels: output shapes, dtypes and the same input checks as the real
// kernels, written with SymInts so torch.compile can trace with dynamic shapes.
#include <torch/library.h>

#include "common/checks.h"
#include "common/ops.h"

namespace batchchol {
namespace {

at::Tensor empty_like_shape(const at::Tensor& like, c10::SymIntArrayRef shape) {
  return at::empty_symint(shape, like.options().memory_format(at::MemoryFormat::Contiguous));
}

at::Tensor empty_info(const at::Tensor& A) {
  return at::empty_symint(batch_shape_with(A, {}), A.options().dtype(at::kInt));
}

std::tuple<at::Tensor, at::Tensor> potrf_meta(const at::Tensor& A, bool /*upper*/) {
  check_matrix_op(kPotrf, "A", A);
  return {empty_like_shape(A, A.sym_sizes()), empty_info(A)};
}

at::Tensor solve_out_meta(const at::Tensor& A, const at::Tensor& B) {
  auto shape = broadcast_batch_shape(A, B);
  shape.push_back(B.sym_size(-2));
  shape.push_back(B.sym_size(-1));
  return empty_like_shape(B, shape);
}

at::Tensor potrs_meta(const at::Tensor& L, const at::Tensor& B, bool /*upper*/) {
  check_solve_op(kPotrs, "L", L, "B", B, /*left=*/true);
  return solve_out_meta(L, B);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> posv_meta(const at::Tensor& A, const at::Tensor& B,
                                                         bool /*upper*/) {
  check_solve_op(kPosv, "A", A, "B", B, /*left=*/true);
  return {solve_out_meta(A, B), empty_like_shape(A, A.sym_sizes()), empty_info(A)};
}

std::tuple<at::Tensor, at::Tensor> posv_solve_meta(const at::Tensor& A, const at::Tensor& B,
                                                   bool /*upper*/) {
  check_solve_op(kPosvSolve, "A", A, "B", B, /*left=*/true);
  return {solve_out_meta(A, B), empty_info(A)};
}

at::Tensor trsm_meta(const at::Tensor& A, const at::Tensor& B, bool /*upper*/, bool left,
                     bool /*transpose*/, bool /*unit_diagonal*/) {
  check_solve_op(kTrsm, "A", A, "B", B, left);
  return solve_out_meta(A, B);
}

// Fake tensors hold no values: nothing to check while tracing.
void check_info_meta(const at::Tensor& /*info*/, c10::string_view /*api*/,
                     c10::string_view /*what*/) {}

}  // namespace

TORCH_LIBRARY_IMPL(batchchol, Meta, m) {
  m.impl("_check_info", &check_info_meta);
  m.impl("potrf", &potrf_meta);
  m.impl("potrs", &potrs_meta);
  m.impl("posv", &posv_meta);
  m.impl("posv_solve", &posv_solve_meta);
  m.impl("trsm", &trsm_meta);
}

}  // namespace batchchol
