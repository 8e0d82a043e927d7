// Calls of the ragged-batch ops through the dispatcher (see dispatch_api.h).
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ATen.h>

#include <tuple>

namespace batchchol {
namespace api {

using OptInt = c10::optional<int64_t>;

inline std::tuple<at::Tensor, at::Tensor> potrf_vbatched(const at::Tensor& A, const at::Tensor& n,
                                                         const at::Tensor& offsets, OptInt max_n,
                                                         bool upper) {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("batchchol::potrf_vbatched", "")
                       .typed<std::tuple<at::Tensor, at::Tensor>(
                           const at::Tensor&, const at::Tensor&, const at::Tensor&, OptInt, bool)>();
  return op.call(A, n, offsets, max_n, upper);
}

inline at::Tensor potrs_vbatched(const at::Tensor& L, const at::Tensor& n,
                                 const at::Tensor& offsets, const at::Tensor& B,
                                 const at::Tensor& b_offsets, int64_t k, OptInt max_n,
                                 bool upper) {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("batchchol::potrs_vbatched", "")
                       .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                         const at::Tensor&, const at::Tensor&, int64_t, OptInt,
                                         bool)>();
  return op.call(L, n, offsets, B, b_offsets, k, max_n, upper);
}

inline std::tuple<at::Tensor, at::Tensor, at::Tensor> posv_vbatched(
    const at::Tensor& A, const at::Tensor& n, const at::Tensor& offsets, const at::Tensor& B,
    const at::Tensor& b_offsets, int64_t k, OptInt max_n, bool upper) {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("batchchol::posv_vbatched", "")
                       .typed<std::tuple<at::Tensor, at::Tensor, at::Tensor>(
                           const at::Tensor&, const at::Tensor&, const at::Tensor&,
                           const at::Tensor&, const at::Tensor&, int64_t, OptInt, bool)>();
  return op.call(A, n, offsets, B, b_offsets, k, max_n, upper);
}

inline at::Tensor trsm_vbatched(const at::Tensor& A, const at::Tensor& n,
                                const at::Tensor& offsets, const at::Tensor& B,
                                const at::Tensor& b_offsets, int64_t k, OptInt max_n, bool upper,
                                bool left, bool transpose, bool unit_diagonal) {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("batchchol::trsm_vbatched", "")
                       .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                         const at::Tensor&, const at::Tensor&, int64_t, OptInt,
                                         bool, bool, bool, bool)>();
  return op.call(A, n, offsets, B, b_offsets, k, max_n, upper, left, transpose, unit_diagonal);
}

inline at::Tensor gemm_vbatched(const at::Tensor& P, const at::Tensor& p_offsets, int64_t p_rows,
                                int64_t p_cols, bool p_conj_trans, const at::Tensor& Q,
                                const at::Tensor& q_offsets, int64_t q_rows, int64_t q_cols,
                                bool q_conj_trans, const at::Tensor& n,
                                const at::Tensor& c_offsets, c10::SymInt c_numel,
                                OptInt max_n) {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("batchchol::_gemm_vbatched", "")
                       .typed<at::Tensor(const at::Tensor&, const at::Tensor&, int64_t, int64_t,
                                         bool, const at::Tensor&, const at::Tensor&, int64_t,
                                         int64_t, bool, const at::Tensor&, const at::Tensor&,
                                         c10::SymInt, OptInt)>();
  return op.call(P, p_offsets, p_rows, p_cols, p_conj_trans, Q, q_offsets, q_rows, q_cols,
                 q_conj_trans, n, c_offsets, std::move(c_numel), max_n);
}

inline at::Tensor tri_vbatched(const at::Tensor& X, const at::Tensor& n, const at::Tensor& offsets,
                               int64_t mode, OptInt max_n) {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("batchchol::_tri_vbatched", "")
                       .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                         int64_t, OptInt)>();
  return op.call(X, n, offsets, mode, max_n);
}

}  // namespace api
}  // namespace batchchol
