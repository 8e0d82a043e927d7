// Data-free checks of the ragged-batch ops, for their fake kernels.
//
// The fake kernels themselves are Python (torch_batchchol/_fake.py): a ragged op may
// take its metadata (n, offsets) on the CPU and its values on the GPU, and FakeTensor
// cannot infer one output device for an op with a C++ Meta kernel and non-scalar
// inputs on two devices (it raises "Unhandled FakeTensor Device Propagation"). A Python
// fake kernel names the output devices itself. So that it raises the same errors as the
// real kernels, it calls batchchol::_check_vbatched_args, which runs the shared C++
// checks and has no outputs (and so no device to infer).
#include <torch/library.h>

#include <string>

#include "common/ops_vbatched.h"
#include "common/ragged.h"

namespace batchchol {
namespace {

void check_vbatched_args(c10::string_view op, const at::Tensor& A, const at::Tensor& n,
                         const at::Tensor& offsets, const c10::optional<at::Tensor>& B,
                         const c10::optional<at::Tensor>& b_offsets, int64_t k) {
  const char* name = op == "potrf_vbatched"   ? kPotrfV
                     : op == "potrs_vbatched" ? kPotrsV
                     : op == "posv_vbatched"  ? kPosvV
                     : op == "trsm_vbatched"  ? kTrsmV
                                              : nullptr;
  TORCH_CHECK(name != nullptr, "batchchol._check_vbatched_args: unknown op ", std::string(op));
  const char* a_name = op == "potrs_vbatched" ? "L" : "A";
  check_ragged_matrices(name, a_name, A, n, offsets);
  if (B.has_value()) {
    TORCH_CHECK(b_offsets.has_value(), name, ": b_offsets missing");
    check_ragged_rhs(name, A, n, "B", *B, *b_offsets, k);
  }
}

void check_gemm_vbatched_args(const at::Tensor& P, const at::Tensor& p_offsets, int64_t p_rows,
                              int64_t p_cols, bool p_conj_trans, const at::Tensor& Q,
                              const at::Tensor& q_offsets, int64_t q_rows, int64_t q_cols,
                              bool q_conj_trans, const at::Tensor& n,
                              const at::Tensor& c_offsets) {
  check_gemm_vbatched(P, p_offsets, p_rows, p_cols, p_conj_trans, Q, q_offsets, q_rows, q_cols,
                      q_conj_trans, n, c_offsets);
}

}  // namespace

// Composite: runs on every backend, Meta (and so fake tensors) included; reads shapes,
// dtypes and devices only.
TORCH_LIBRARY_IMPL(batchchol, CompositeExplicitAutograd, m) {
  m.impl("_check_vbatched_args", &check_vbatched_args);
  m.impl("_check_gemm_vbatched_args", &check_gemm_vbatched_args);
  m.impl("_check_tri_vbatched_args", &check_tri_vbatched);
}

}  // namespace batchchol
