// Batch-level helpers shared by the CPU op drivers.
#pragma once

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace batchchol::cpu {

// Systems per parallel task: at::parallel_for gives each thread at least `grain`
// systems, so tiny matrices are grouped until a task does ~64k flops and the
// scheduling cost stays negligible.
inline int64_t batch_grain(double flops_per_system) {
  constexpr double kMinTaskFlops = 65536.0;
  return std::max<int64_t>(1, static_cast<int64_t>(kMinTaskFlops / std::max(flops_per_system, 1.0)));
}

// A [*, r, c] tensor's batch dims.
inline std::vector<int64_t> batch_dims(const at::Tensor& t) {
  return std::vector<int64_t>(t.sizes().begin(), t.sizes().end() - 2);
}

inline at::Tensor empty_contiguous(at::IntArrayRef shape, const at::TensorOptions& opts) {
  return at::empty(shape, opts.memory_format(at::MemoryFormat::Contiguous));
}

// True when A's matrices are stored transposed (column-major, as the LAPACK-backed
// torch.linalg ops return them), so A.mT() is row-major contiguous and can be read in
// place with the triangle and transposition flags flipped, instead of being copied.
inline bool is_transposed_contiguous(const at::Tensor& A) {
  return A.size(-1) > 1 && !A.is_contiguous() && A.mT().is_contiguous();
}

}  // namespace batchchol::cpu
