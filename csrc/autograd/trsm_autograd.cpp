// Autograd of trsm: op(A) X = B (left) or X op(A) = B (right).
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

class TrsmFunction : public torch::autograd::Function<TrsmFunction> {
 public:
  static variable_list forward(AutogradContext* ctx, const at::Tensor& A, const at::Tensor& B,
                               bool upper, bool left, bool transpose, bool unit_diagonal) {
    at::AutoDispatchBelowADInplaceOrView guard;
    auto X = api::trsm(A, B, upper, left, transpose, unit_diagonal);
    ctx->saved_data["upper"] = upper;
    ctx->saved_data["left"] = left;
    ctx->saved_data["transpose"] = transpose;
    ctx->saved_data["unit_diagonal"] = unit_diagonal;
    ctx->saved_data["b_shape"] = B.sym_sizes();
    ctx->save_for_backward({A, X});
    return {X};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    auto [gA, gB] = trsm_backward(
        grads[0], saved[0], saved[1], ctx->saved_data["upper"].toBool(),
        ctx->saved_data["left"].toBool(), ctx->saved_data["transpose"].toBool(),
        ctx->saved_data["unit_diagonal"].toBool(), ctx->needs_input_grad(0),
        ctx->needs_input_grad(1));
    if (gB.defined()) gB = reduce_to(gB, ctx->saved_data["b_shape"].toSymIntVector());
    return {gA, gB, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

at::Tensor trsm_autograd(const at::Tensor& A, const at::Tensor& B, bool upper, bool left,
                         bool transpose, bool unit_diagonal) {
  if (!records_grad({A, B})) {
    at::AutoDispatchBelowADInplaceOrView guard;
    return api::trsm(A, B, upper, left, transpose, unit_diagonal);
  }
  return TrsmFunction::apply(A, B, upper, left, transpose, unit_diagonal)[0];
}

}  // namespace

TORCH_LIBRARY_IMPL(batchchol, Autograd, m) { m.impl("trsm", &trsm_autograd); }

}  // namespace autograd
}  // namespace batchchol
