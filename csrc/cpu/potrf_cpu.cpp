// CPU potrf: one Cholesky factorization per matrix of the batch, matrices spread over
// threads; one large matrix goes to LAPACK (single_cpu.cpp).
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <vector>

#include "common/batching.h"
#include "common/checks.h"
#include "common/ops.h"
#include "cpu/batch_loop.h"
#include "cpu/dense_kernels.h"
#include "cpu/single_cpu.h"

namespace batchchol {

std::tuple<at::Tensor, at::Tensor> potrf_cpu(const at::Tensor& A, bool upper) {
  check_matrix_op(kPotrf, "A", A);
  const int64_t n = A.size(-1);
  at::Tensor info = at::zeros(cpu::batch_dims(A), A.options().dtype(at::kInt));
  const int64_t batch = batch_count(A);
  if (cpu::single_applies(batch, n, A.is_complex(), "BATCHCHOL_POTRF_SINGLE"))
    return {cpu::potrf_single(A, upper, info), info};  // LAPACK's factor is the result
  at::Tensor L = cpu::empty_contiguous(A.sizes(), A.options());
  if (batch == 0 || n == 0) return {L, info};
  const at::Tensor Af = flatten_batch(A);
  const double flops = double(n) * n * n / 3.0 + 2.0 * n * n;
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES(A.scalar_type(), "batchchol_potrf_cpu", [&] {
    const scalar_t* src = Af.const_data_ptr<scalar_t>();
    scalar_t* dst = L.data_ptr<scalar_t>();
    int32_t* info_p = info.data_ptr<int32_t>();
    at::parallel_for(0, batch, cpu::batch_grain(flops), [&](int64_t b0, int64_t b1) {
      std::vector<cpu::real_t<scalar_t>> scratch(n);
      for (int64_t b = b0; b < b1; ++b)
        info_p[b] = cpu::factor_into(src + b * n * n, dst + b * n * n, n, upper, scratch.data());
    });
  });
  return {L, info};
}

TORCH_LIBRARY_IMPL(batchchol, CPU, m) { m.impl("potrf", &potrf_cpu); }

}  // namespace batchchol
