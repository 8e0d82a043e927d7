// Autograd of potrf, registered on the Autograd key so LibTorch users get it too.
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

class PotrfFunction : public torch::autograd::Function<PotrfFunction> {
 public:
  static variable_list forward(AutogradContext* ctx, const at::Tensor& A, bool upper) {
    at::AutoDispatchBelowADInplaceOrView guard;
    auto [L, info] = api::potrf(A, upper);
    ctx->saved_data["upper"] = upper;
    ctx->save_for_backward({L});
    ctx->mark_non_differentiable({info});
    return {L, info};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto L = ctx->get_saved_variables()[0];
    const bool upper = ctx->saved_data["upper"].toBool();
    return {potrf_backward(grads[0], L, upper), at::Tensor()};
  }
};

std::tuple<at::Tensor, at::Tensor> potrf_autograd(const at::Tensor& A, bool upper) {
  if (!records_grad({A})) {
    at::AutoDispatchBelowADInplaceOrView guard;
    return api::potrf(A, upper);
  }
  auto out = PotrfFunction::apply(A, upper);
  return {out[0], out[1]};
}

}  // namespace

TORCH_LIBRARY_IMPL(batchchol, Autograd, m) { m.impl("potrf", &potrf_autograd); }

}  // namespace autograd
}  // namespace batchchol
