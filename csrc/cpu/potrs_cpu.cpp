// CPU potrs: both triangular solves of each system back to back, so the factor is
// read from memory once per system.
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <algorithm>

#include "common/batching.h"
#include "common/checks.h"
#include "common/ops.h"
#include "cpu/batch_loop.h"
#include "cpu/dense_kernels.h"
#include "cpu/single_cpu.h"

namespace batchchol {

at::Tensor potrs_cpu(const at::Tensor& L, const at::Tensor& B, bool upper) {
  check_solve_op(kPotrs, "L", L, "B", B, /*left=*/true);
  const bool transposed = cpu::is_transposed_contiguous(L);
  const SolveBatch s = make_solve_batch(transposed ? L.mT() : L, B);
  at::Tensor X = cpu::empty_contiguous(s.out_shape, B.options());
  if (s.batch == 0 || s.n == 0 || s.cols == 0) return X;
  // One system with many columns: LAPACK's potrs runs them as BLAS-3 solves (single_cpu.cpp).
  if (s.cols >= 16 && cpu::single_applies(s.batch, s.n, L.is_complex(), "BATCHCHOL_SOLVE_SINGLE"))
    return potrs_single(L, B, upper);
  const int64_t n = s.n, k = s.cols;
  const double flops = 2.0 * n * n * k;
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES(L.scalar_type(), "batchchol_potrs_cpu", [&] {
    const scalar_t* a = s.A.const_data_ptr<scalar_t>();
    const scalar_t* b = s.B.const_data_ptr<scalar_t>();
    scalar_t* x = X.data_ptr<scalar_t>();
    at::parallel_for(0, s.batch, cpu::batch_grain(flops), [&](int64_t b0, int64_t b1) {
      for (int64_t i = b0; i < b1; ++i) {
        scalar_t* xi = x + i * n * k;
        std::copy(b + i * n * k, b + (i + 1) * n * k, xi);
        cpu::potrs_inplace(a + i * s.a_stride, n, xi, k, upper, transposed);
      }
    });
  });
  return X;
}

TORCH_LIBRARY_IMPL(batchchol, CPU, m) { m.impl("potrs", &potrs_cpu); }

}  // namespace batchchol
