// Input validation shared by the CPU, CUDA and Meta kernels, so that every backend
// (and torch.compile's fake tensors) rejects bad input with the same exception type
// and message. Shape checks go through SymInts so they also run under dynamic shapes.
#pragma once

#include <ATen/ATen.h>
#include <c10/core/SymIntArrayRef.h>

#include <string>

namespace batchchol {

// A size (concrete or symbolic) as text for an error message. Numbers never go through
// std::ostream in this library's messages: that path crashed inside libstdc++'s number
// formatting on one GPU machine's build
// (benchmarks/results/h200-2026-11-22-cuda-error-path-segfault.txt).
std::string sym_str(const c10::SymInt& s);

// float32, float64, complex64, complex128; anything else raises TypeError.
void check_dtype(const char* op, const char* name, const at::Tensor& t);

// t is a batch of square matrices [*, n, n]; raises ValueError otherwise.
void check_square(const char* op, const char* name, const at::Tensor& t);

// b has the dtype and device of a (TypeError / RuntimeError otherwise).
void check_same_dtype_device(const char* op, const char* a_name, const at::Tensor& a,
                             const char* b_name, const at::Tensor& b);

// B is [*, n, k] (left) or [*, k, n] (right) for the square A [*, n, n], and the
// batch dimensions of A and B broadcast; raises ValueError otherwise.
void check_rhs(const char* op, const char* a_name, const at::Tensor& A, const char* b_name,
               const at::Tensor& B, bool left);

// All checks of an op that takes one square matrix batch.
inline void check_matrix_op(const char* op, const char* name, const at::Tensor& A) {
  check_dtype(op, name, A);
  check_square(op, name, A);
}

// All checks of an op that takes a square batch A and a right-hand side B.
inline void check_solve_op(const char* op, const char* a_name, const at::Tensor& A,
                           const char* b_name, const at::Tensor& B, bool left) {
  check_dtype(op, a_name, A);
  check_square(op, a_name, A);
  check_same_dtype_device(op, a_name, A, b_name, B);
  check_rhs(op, a_name, A, b_name, B, left);
}

// Broadcast batch shape of A [*, n, n] and B [*, r, c] (the leading dims only).
c10::SymDimVector broadcast_batch_shape(const at::Tensor& A, const at::Tensor& B);

// The batch shape of A [*, n, n] followed by `tail`.
c10::SymDimVector batch_shape_with(const at::Tensor& A, c10::SymIntArrayRef tail);

}  // namespace batchchol
