// Autograd of the ragged-batch ops, on the Autograd key (formulas: vbatched_formulas.h).
// Sizes and offsets are integer metadata: never differentiable.
#include <torch/autograd.h>
#include <torch/library.h>

#include "autograd/vbatched_formulas.h"
#include "autograd/records_grad.h"
#include "common/dispatch_api_vbatched.h"

namespace batchchol {
namespace autograd {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;
using OptInt = c10::optional<int64_t>;

// Saves the metadata; tensors go through save_for_backward (ahead of `first`).
void save_ragged(AutogradContext* ctx, const at::Tensor& n, const at::Tensor& offsets,
                 const at::Tensor& b_offsets, int64_t k, OptInt max_n,
                 std::vector<at::Tensor> first) {
  first.push_back(n);
  first.push_back(offsets);
  first.push_back(b_offsets);
  ctx->save_for_backward(first);
  ctx->saved_data["k"] = k;
  ctx->saved_data["max_n"] = max_n ? c10::IValue(*max_n) : c10::IValue();
}

// The saved tensors (the op's own, then the metadata) and the metadata as a Ragged.
Ragged load_ragged(AutogradContext* ctx, variable_list& saved) {
  saved = ctx->get_saved_variables();
  Ragged r;
  const size_t m = saved.size() - 3;
  r.n = saved[m];
  r.offsets = saved[m + 1];
  r.b_offsets = saved[m + 2];
  r.k = ctx->saved_data["k"].toInt();
  const auto& mx = ctx->saved_data["max_n"];
  if (!mx.isNone()) r.max_n = mx.toInt();
  return r;
}

variable_list no_grads(size_t count) { return variable_list(count); }

class PotrfV : public torch::autograd::Function<PotrfV> {
 public:
  static variable_list forward(AutogradContext* ctx, const at::Tensor& A, const at::Tensor& n,
                               const at::Tensor& offsets, OptInt max_n, bool upper) {
    at::AutoDispatchBelowADInplaceOrView guard;
    auto [L, info] = api::potrf_vbatched(A, n, offsets, max_n, upper);
    ctx->saved_data["upper"] = upper;
    save_ragged(ctx, n, offsets, offsets, -1, max_n, {L});
    ctx->mark_non_differentiable({info});
    return {L, info};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    variable_list saved;
    const Ragged r = load_ragged(ctx, saved);
    auto out = no_grads(5);
    if (grads[0].defined())
      out[0] = potrf_vbatched_backward(grads[0], saved[0], ctx->saved_data["upper"].toBool(), r);
    return out;
  }
};

class PotrsV : public torch::autograd::Function<PotrsV> {
 public:
  static variable_list forward(AutogradContext* ctx, const at::Tensor& L, const at::Tensor& n,
                               const at::Tensor& offsets, const at::Tensor& B,
                               const at::Tensor& b_offsets, int64_t k, OptInt max_n, bool upper) {
    at::AutoDispatchBelowADInplaceOrView guard;
    auto X = api::potrs_vbatched(L, n, offsets, B, b_offsets, k, max_n, upper);
    ctx->saved_data["upper"] = upper;
    save_ragged(ctx, n, offsets, b_offsets, k, max_n, {L, X});
    return {X};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    variable_list saved;
    const Ragged r = load_ragged(ctx, saved);
    const bool upper = ctx->saved_data["upper"].toBool();
    auto out = no_grads(8);
    if (!grads[0].defined()) return out;
    const at::Tensor gB = solve_with_factor_vbatched(saved[0], grads[0], upper, r);
    if (ctx->needs_input_grad(0))
      out[0] = factor_grad_from_solve_vbatched(gB, saved[1], saved[0], upper, r);
    if (ctx->needs_input_grad(3)) out[3] = gB;
    return out;
  }
};

class PosvV : public torch::autograd::Function<PosvV> {
 public:
  static variable_list forward(AutogradContext* ctx, const at::Tensor& A, const at::Tensor& n,
                               const at::Tensor& offsets, const at::Tensor& B,
                               const at::Tensor& b_offsets, int64_t k, OptInt max_n, bool upper) {
    at::AutoDispatchBelowADInplaceOrView guard;
    auto [X, L, info] = api::posv_vbatched(A, n, offsets, B, b_offsets, k, max_n, upper);
    ctx->saved_data["upper"] = upper;
    save_ragged(ctx, n, offsets, b_offsets, k, max_n, {L, X});
    ctx->mark_non_differentiable({info});
    return {X, L, info};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    variable_list saved;
    const Ragged r = load_ragged(ctx, saved);
    const bool upper = ctx->saved_data["upper"].toBool();
    const auto& L = saved[0];
    auto out = no_grads(8);
    at::Tensor gA;
    if (grads[0].defined()) {
      const at::Tensor gB = solve_with_factor_vbatched(L, grads[0], upper, r);
      if (ctx->needs_input_grad(0)) gA = matrix_grad_from_solve_vbatched(gB, saved[1], L, r);
      if (ctx->needs_input_grad(3)) out[3] = gB;
    }
    if (grads[1].defined() && ctx->needs_input_grad(0)) {
      at::Tensor g = potrf_vbatched_backward(grads[1], L, upper, r);
      gA = gA.defined() ? gA + g : g;
    }
    out[0] = gA;
    return out;
  }
};

class TrsmV : public torch::autograd::Function<TrsmV> {
 public:
  static variable_list forward(AutogradContext* ctx, const at::Tensor& A, const at::Tensor& n,
                               const at::Tensor& offsets, const at::Tensor& B,
                               const at::Tensor& b_offsets, int64_t k, OptInt max_n, bool upper,
                               bool left, bool transpose, bool unit_diagonal) {
    at::AutoDispatchBelowADInplaceOrView guard;
    auto X = api::trsm_vbatched(A, n, offsets, B, b_offsets, k, max_n, upper, left, transpose,
                                unit_diagonal);
    ctx->saved_data["flags"] = std::vector<bool>{upper, left, transpose, unit_diagonal};
    save_ragged(ctx, n, offsets, b_offsets, k, max_n, {A, X});
    return {X};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    variable_list saved;
    const Ragged r = load_ragged(ctx, saved);
    const auto f = ctx->saved_data["flags"].toBoolList();
    auto out = no_grads(11);
    if (!grads[0].defined()) return out;
    auto [gA, gB] = trsm_vbatched_backward(grads[0], saved[0], saved[1], f[0], f[1], f[2], f[3],
                                           ctx->needs_input_grad(0), ctx->needs_input_grad(3), r);
    out[0] = gA;
    out[3] = gB;
    return out;
  }
};

// _tri_vbatched is linear and each of its modes is self-adjoint (masks, the
// Hermitian part, the transpose), so its backward is itself.
class TriV : public torch::autograd::Function<TriV> {
 public:
  static variable_list forward(AutogradContext* ctx, const at::Tensor& X, const at::Tensor& n,
                               const at::Tensor& offsets, int64_t mode, OptInt max_n) {
    at::AutoDispatchBelowADInplaceOrView guard;
    ctx->saved_data["mode"] = mode;
    ctx->saved_data["max_n"] = max_n ? c10::IValue(*max_n) : c10::IValue();
    ctx->save_for_backward({n, offsets});
    return {api::tri_vbatched(X, n, offsets, mode, max_n)};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    auto out = no_grads(5);
    const auto& mx = ctx->saved_data["max_n"];
    if (grads[0].defined())
      out[0] = api::tri_vbatched(grads[0], saved[0], saved[1], ctx->saved_data["mode"].toInt(),
                                 mx.isNone() ? OptInt() : OptInt(mx.toInt()));
    return out;
  }
};

at::Tensor tri_vbatched_autograd(const at::Tensor& X, const at::Tensor& n,
                                 const at::Tensor& offsets, int64_t mode, OptInt max_n) {
  if (!records_grad({X})) {
    at::AutoDispatchBelowADInplaceOrView guard;
    return api::tri_vbatched(X, n, offsets, mode, max_n);
  }
  return TriV::apply(X, n, offsets, mode, max_n)[0];
}

std::tuple<at::Tensor, at::Tensor> potrf_vbatched_autograd(const at::Tensor& A,
                                                           const at::Tensor& n,
                                                           const at::Tensor& offsets,
                                                           OptInt max_n, bool upper) {
  if (!records_grad({A})) {
    at::AutoDispatchBelowADInplaceOrView guard;
    return api::potrf_vbatched(A, n, offsets, max_n, upper);
  }
  auto o = PotrfV::apply(A, n, offsets, max_n, upper);
  return {o[0], o[1]};
}

at::Tensor potrs_vbatched_autograd(const at::Tensor& L, const at::Tensor& n,
                                   const at::Tensor& offsets, const at::Tensor& B,
                                   const at::Tensor& b_offsets, int64_t k, OptInt max_n,
                                   bool upper) {
  if (!records_grad({L, B})) {
    at::AutoDispatchBelowADInplaceOrView guard;
    return api::potrs_vbatched(L, n, offsets, B, b_offsets, k, max_n, upper);
  }
  return PotrsV::apply(L, n, offsets, B, b_offsets, k, max_n, upper)[0];
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> posv_vbatched_autograd(
    const at::Tensor& A, const at::Tensor& n, const at::Tensor& offsets, const at::Tensor& B,
    const at::Tensor& b_offsets, int64_t k, OptInt max_n, bool upper) {
  if (!records_grad({A, B})) {
    at::AutoDispatchBelowADInplaceOrView guard;
    return api::posv_vbatched(A, n, offsets, B, b_offsets, k, max_n, upper);
  }
  auto o = PosvV::apply(A, n, offsets, B, b_offsets, k, max_n, upper);
  return {o[0], o[1], o[2]};
}

at::Tensor trsm_vbatched_autograd(const at::Tensor& A, const at::Tensor& n,
                                  const at::Tensor& offsets, const at::Tensor& B,
                                  const at::Tensor& b_offsets, int64_t k, OptInt max_n,
                                  bool upper, bool left, bool transpose, bool unit_diagonal) {
  if (!records_grad({A, B})) {
    at::AutoDispatchBelowADInplaceOrView guard;
    return api::trsm_vbatched(A, n, offsets, B, b_offsets, k, max_n, upper, left, transpose,
                              unit_diagonal);
  }
  return TrsmV::apply(A, n, offsets, B, b_offsets, k, max_n, upper, left, transpose,
                      unit_diagonal)[0];
}

}  // namespace

TORCH_LIBRARY_IMPL(batchchol, Autograd, m) {
  m.impl("potrf_vbatched", &potrf_vbatched_autograd);
  m.impl("potrs_vbatched", &potrs_vbatched_autograd);
  m.impl("posv_vbatched", &posv_vbatched_autograd);
  m.impl("trsm_vbatched", &trsm_vbatched_autograd);
  m.impl("_tri_vbatched", &tri_vbatched_autograd);
}

}  // namespace autograd
}  // namespace batchchol
