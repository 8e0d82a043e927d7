// Argument checks of the private helper ops _gemm_vbatched and _tri_vbatched, shared
// by every backend and the Meta kernels.
#include <climits>
#include <string>

#include "common/ops_vbatched.h"
#include "common/ragged.h"

namespace batchchol {

namespace {

constexpr const char* kGemmV = "batchchol._gemm_vbatched";
constexpr const char* kTriV = "batchchol._tri_vbatched";

bool valid_dim(int64_t d) { return d == kSizeN || (d >= 0 && d <= INT32_MAX); }

}  // namespace

void check_gemm_vbatched(const at::Tensor& P, const at::Tensor& p_offsets, int64_t p_rows,
                         int64_t p_cols, bool p_conj_trans, const at::Tensor& Q,
                         const at::Tensor& q_offsets, int64_t q_rows, int64_t q_cols,
                         bool q_conj_trans, const at::Tensor& n, const at::Tensor& c_offsets) {
  check_ragged_matrices(kGemmV, "P", P, n, p_offsets);
  check_ragged_rhs(kGemmV, P, n, "Q", Q, q_offsets, 0);
  check_ragged_rhs(kGemmV, P, n, "C", P, c_offsets, 0);
  TORCH_CHECK_VALUE(valid_dim(p_rows) && valid_dim(p_cols) && valid_dim(q_rows) &&
                        valid_dim(q_cols),
                    kGemmV, ": block dimensions must be -1 (n) or in [0, 2^31)");
  const int64_t inner_p = p_conj_trans ? p_rows : p_cols;
  const int64_t inner_q = q_conj_trans ? q_cols : q_rows;
  TORCH_CHECK_VALUE(inner_p == inner_q, kGemmV, ": inner dimensions differ (",
                    std::to_string(inner_p), " and ", std::to_string(inner_q), ")");
}

void check_tri_vbatched(const at::Tensor& X, const at::Tensor& n, const at::Tensor& offsets,
                        int64_t mode) {
  check_ragged_matrices(kTriV, "X", X, n, offsets);
  TORCH_CHECK_VALUE(mode >= kTriLower && mode <= kTriTranspose, kTriV, ": unknown mode ",
                    std::to_string(mode));
}

}  // namespace batchchol
