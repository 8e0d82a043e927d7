// Autograd of posv: (X, L, info) with A = L L^H and X = A^{-1} B; and of posv_solve,
// its (X, info).
#include <torch/autograd.h>
#include <torch/library.h>

#include "autograd/formulas.h"
#include "autograd/records_grad.h"
#include "common/dispatch_api.h"

namespace batchchol {
namespace autograd {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

class PosvFunction : public torch::autograd::Function<PosvFunction> {
 public:
  static variable_list forward(AutogradContext* ctx, const at::Tensor& A, const at::Tensor& B,
                               bool upper) {
    at::AutoDispatchBelowADInplaceOrView guard;
    auto [X, L, info] = api::posv(A, B, upper);
    ctx->saved_data["upper"] = upper;
    ctx->saved_data["a_shape"] = A.sym_sizes();
    ctx->saved_data["b_shape"] = B.sym_sizes();
    ctx->save_for_backward({L, X});
    ctx->mark_non_differentiable({info});
    return {X, L, info};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& L = saved[0];
    const auto& X = saved[1];
    const bool upper = ctx->saved_data["upper"].toBool();
    const auto a_shape = ctx->saved_data["a_shape"].toSymIntVector();
    const auto b_shape = ctx->saved_data["b_shape"].toSymIntVector();
    const auto& gX = grads[0];
    const auto& gL = grads[1];

    at::Tensor gA, gB;
    if (gX.defined()) {
      gB = api::potrs(L, gX, upper);
      if (ctx->needs_input_grad(0)) {
        // A is Hermitian: the Hermitian part of -gB X^H (torch.linalg's convention).
        at::Tensor S = at::matmul(gB, X.mH());
        gA = reduce_to(-0.5 * (S + S.mH()), a_shape);
      }
      gB = ctx->needs_input_grad(1) ? reduce_to(gB, b_shape) : at::Tensor();
    }
    if (gL.defined() && ctx->needs_input_grad(0)) {
      at::Tensor g = potrf_backward(gL, L, upper);
      gA = gA.defined() ? gA + g : g;
    }
    return {gA, gB, at::Tensor()};
  }
};

std::tuple<at::Tensor, at::Tensor, at::Tensor> posv_autograd(const at::Tensor& A,
                                                             const at::Tensor& B, bool upper) {
  if (!records_grad({A, B})) {
    at::AutoDispatchBelowADInplaceOrView guard;
    return api::posv(A, B, upper);
  }
  auto out = PosvFunction::apply(A, B, upper);
  return {out[0], out[1], out[2]};
}

// Without a gradient to record the factor stays on chip; with one, posv keeps L for
// the backward (the same formulas: posv_solve's X is posv's X).
std::tuple<at::Tensor, at::Tensor> posv_solve_autograd(const at::Tensor& A, const at::Tensor& B,
                                                       bool upper) {
  if (!records_grad({A, B})) {
    at::AutoDispatchBelowADInplaceOrView guard;
    return api::posv_solve(A, B, upper);
  }
  auto out = PosvFunction::apply(A, B, upper);
  return {out[0], out[2]};
}

}  // namespace

TORCH_LIBRARY_IMPL(batchchol, Autograd, m) {
  m.impl("posv", &posv_autograd);
  m.impl("posv_solve", &posv_solve_autograd);
}

}  // namespace autograd
}  // namespace batchchol
