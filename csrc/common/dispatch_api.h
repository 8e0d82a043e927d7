// Calls of the batchchol ops through the dispatcher, for C++ callers (LibTorch
// programs, and the autograd formulas, whose backward must itself go through
// autograd so that double backward works).
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ATen.h>

#include <tuple>

namespace batchchol {
namespace api {

inline std::tuple<at::Tensor, at::Tensor> potrf(const at::Tensor& A, bool upper = false) {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("batchchol::potrf", "")
                       .typed<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, bool)>();
  return op.call(A, upper);
}

inline at::Tensor potrs(const at::Tensor& L, const at::Tensor& B, bool upper = false) {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("batchchol::potrs", "")
                       .typed<at::Tensor(const at::Tensor&, const at::Tensor&, bool)>();
  return op.call(L, B, upper);
}

inline std::tuple<at::Tensor, at::Tensor, at::Tensor> posv(const at::Tensor& A,
                                                           const at::Tensor& B,
                                                           bool upper = false) {
  static auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("batchchol::posv", "")
          .typed<std::tuple<at::Tensor, at::Tensor, at::Tensor>(const at::Tensor&,
                                                                const at::Tensor&, bool)>();
  return op.call(A, B, upper);
}

inline std::tuple<at::Tensor, at::Tensor> posv_solve(const at::Tensor& A, const at::Tensor& B,
                                                     bool upper = false) {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("batchchol::posv_solve", "")
                       .typed<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&,
                                                                 const at::Tensor&, bool)>();
  return op.call(A, B, upper);
}

inline at::Tensor trsm(const at::Tensor& A, const at::Tensor& B, bool upper = false,
                       bool left = true, bool transpose = false, bool unit_diagonal = false) {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("batchchol::trsm", "")
                       .typed<at::Tensor(const at::Tensor&, const at::Tensor&, bool, bool, bool,
                                         bool)>();
  return op.call(A, B, upper, left, transpose, unit_diagonal);
}

}  // namespace api
}  // namespace batchchol
