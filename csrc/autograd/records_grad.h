// Whether an op's Autograd kernel has anything to record.
//
// Function::apply builds its node, context and saved data even where no input requires
// grad, several microseconds of host time per call, which is most of a small ragged
// call; where nothing is recorded the kernels call the op below the Autograd key
// directly. An input with a forward-mode tangent takes Function::apply, which raises
// (the C++ Functions have no jvp) rather than dropping the tangent.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <functional>
#include <initializer_list>

namespace batchchol {
namespace autograd {

inline bool records_grad(std::initializer_list<std::reference_wrapper<const at::Tensor>> inputs) {
  const bool grad_mode = at::GradMode::is_enabled();
  for (const at::Tensor& t : inputs) {
    if (!t.defined()) continue;
    if ((grad_mode && t.requires_grad()) || t._fw_grad(/*level=*/0).defined()) return true;
  }
  return false;
}

}  // namespace autograd
}  // namespace batchchol
