// batchchol::_check_info: raises torch.linalg.LinAlgError, in torch.linalg's words,
// for the first matrix whose info is non-zero. It copies info to the host, so the
// torch.linalg-style functions that must raise (cholesky, solve) pay one sync, as
// torch.linalg's do; the ops themselves never call it.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <string>

namespace batchchol {
namespace {

void check_info(const at::Tensor& info, c10::string_view api, c10::string_view what) {
  TORCH_CHECK_TYPE(info.scalar_type() == at::kInt,
                   "batchchol._check_info: expected an int32 info tensor, but got ",
                   c10::toString(info.scalar_type()));
  const at::Tensor flat = info.reshape({-1}).to(at::kCPU).contiguous();
  const int* values = flat.const_data_ptr<int>();
  for (int64_t i = 0; i < flat.numel(); ++i) {
    if (values[i] == 0) continue;
    // Numbers go through std::to_string (see common/checks.cpp for why).
    const std::string where =
        info.dim() > 0 ? "(Batch element " + std::to_string(i) + "): " : std::string();
    TORCH_CHECK_LINALG(false, std::string(api), ": ", where,
                       "The factorization could not be completed because the ",
                       std::string(what), " is not positive-definite (the leading minor of order ",
                       std::to_string(values[i]), " is not positive-definite).");
  }
}

}  // namespace

TORCH_LIBRARY_IMPL(batchchol, CompositeExplicitAutograd, m) {
  m.impl("_check_info", &check_info);
}

}  // namespace batchchol
