// CPU posv. When every system has its own matrix, each one is factored and solved in
// one pass while it is in cache; a matrix shared by (or broadcast over) several
// right-hand sides is factored once instead, then solved with potrs.
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <algorithm>
#include <vector>

#include "common/batching.h"
#include "common/checks.h"
#include "common/ops.h"
#include "cpu/batch_loop.h"
#include "cpu/dense_kernels.h"
#include "cpu/single_cpu.h"

namespace batchchol {

std::tuple<at::Tensor, at::Tensor, at::Tensor> posv_cpu(const at::Tensor& A, const at::Tensor& B,
                                                        bool upper) {
  check_solve_op(kPosv, "A", A, "B", B, /*left=*/true);
  const SolveBatch s = make_solve_batch(A, B);
  // One large system: potrf_cpu takes it to LAPACK (single_cpu.cpp), unfused.
  if (!s.a_per_system ||
      cpu::single_applies(s.batch, s.n, A.is_complex(), "BATCHCHOL_SOLVE_SINGLE")) {
    auto [L, info] = potrf_cpu(A, upper);
    return {potrs_cpu(L, B, upper), L, info};
  }
  at::Tensor L = cpu::empty_contiguous(A.sizes(), A.options());
  at::Tensor info = at::zeros(cpu::batch_dims(A), A.options().dtype(at::kInt));
  at::Tensor X = cpu::empty_contiguous(s.out_shape, B.options());
  const int64_t n = s.n, k = s.cols;
  if (s.batch == 0 || n == 0) return {X, L, info};
  const double flops = double(n) * n * n / 3.0 + 2.0 * n * n * (k + 1);
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES(A.scalar_type(), "batchchol_posv_cpu", [&] {
    const scalar_t* a = s.A.const_data_ptr<scalar_t>();
    const scalar_t* b = s.B.const_data_ptr<scalar_t>();
    scalar_t* l = L.data_ptr<scalar_t>();
    scalar_t* x = X.data_ptr<scalar_t>();
    int32_t* info_p = info.data_ptr<int32_t>();
    at::parallel_for(0, s.batch, cpu::batch_grain(flops), [&](int64_t b0, int64_t b1) {
      std::vector<cpu::real_t<scalar_t>> scratch(n);
      for (int64_t i = b0; i < b1; ++i) {
        scalar_t* li = l + i * n * n;
        info_p[i] = cpu::factor_into(a + i * n * n, li, n, upper, scratch.data());
        if (k == 0) continue;
        scalar_t* xi = x + i * n * k;
        std::copy(b + i * n * k, b + (i + 1) * n * k, xi);
        cpu::potrs_inplace(li, n, xi, k, upper);
      }
    });
  });
  return {X, L, info};
}

// The CPU kernel factors each matrix in cache anyway; the factor's buffer is dropped.
std::tuple<at::Tensor, at::Tensor> posv_solve_cpu(const at::Tensor& A, const at::Tensor& B,
                                                  bool upper) {
  check_solve_op(kPosvSolve, "A", A, "B", B, /*left=*/true);
  auto [X, L, info] = posv_cpu(A, B, upper);
  return {X, info};
}

TORCH_LIBRARY_IMPL(batchchol, CPU, m) {
  m.impl("posv", &posv_cpu);
  m.impl("posv_solve", &posv_solve_cpu);
}

}  // namespace batchchol
