// Autograd of potrs: X = (L L^H)^{-1} B.
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

class PotrsFunction : public torch::autograd::Function<PotrsFunction> {
 public:
  static variable_list forward(AutogradContext* ctx, const at::Tensor& L, const at::Tensor& B,
                               bool upper) {
    at::AutoDispatchBelowADInplaceOrView guard;
    auto X = api::potrs(L, B, upper);
    ctx->saved_data["upper"] = upper;
    ctx->saved_data["b_shape"] = B.sym_sizes();
    ctx->save_for_backward({L, X});
    return {X};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& L = saved[0];
    const auto& X = saved[1];
    const bool upper = ctx->saved_data["upper"].toBool();
    const auto b_shape = ctx->saved_data["b_shape"].toSymIntVector();
    // The solve is self-adjoint: gB = (L L^H)^{-1} gX.
    at::Tensor gB = api::potrs(L, grads[0], upper);
    at::Tensor gL;
    if (ctx->needs_input_grad(0)) gL = factor_grad_from_solve(gB, X, L, upper);
    if (ctx->needs_input_grad(1)) {
      gB = reduce_to(gB, b_shape);
    } else {
      gB = at::Tensor();
    }
    return {gL, gB, at::Tensor()};
  }
};

at::Tensor potrs_autograd(const at::Tensor& L, const at::Tensor& B, bool upper) {
  if (!records_grad({L, B})) {
    at::AutoDispatchBelowADInplaceOrView guard;
    return api::potrs(L, B, upper);
  }
  return PotrsFunction::apply(L, B, upper)[0];
}

}  // namespace

TORCH_LIBRARY_IMPL(batchchol, Autograd, m) { m.impl("potrs", &potrs_autograd); }

}  // namespace autograd
}  // namespace batchchol
