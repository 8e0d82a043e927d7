// CPU trsm. Every variant becomes a left solve with one of cj(A), cj(A)^T:
//   left:  op(A) X = B             -> A (no flags) or A^H (transposed, conjugated);
//   right: X op(A) = B <=> op(A)^T X^T = B^T -> A^T or conj(A), on B^T held in a
//          per-task workspace (B itself when it has a single row).
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
#include "cpu/trsv_lockstep.h"

namespace batchchol {

at::Tensor trsm_cpu(const at::Tensor& A, const at::Tensor& B, bool upper, bool left,
                    bool transpose, bool unit_diagonal) {
  check_solve_op(kTrsm, "A", A, "B", B, left);
  // A stored transposed is read as C = A^T in place: cj(A) = cj(C)^T, lower <-> upper.
  const bool transposed = cpu::is_transposed_contiguous(A);
  const SolveBatch s = make_solve_batch(transposed ? A.mT() : A, B);
  at::Tensor X = cpu::empty_contiguous(s.out_shape, B.options());
  if (s.batch == 0 || s.rows == 0 || s.cols == 0) return X;
  if (cpu::single_applies(s.batch, s.n, A.is_complex(), "BATCHCHOL_SOLVE_SINGLE"))
    return trsm_single(A, B, upper, left, transpose, unit_diagonal);
  const int64_t n = s.n;
  const int64_t k = left ? s.cols : s.rows;
  const bool trans = (left ? transpose : !transpose) != transposed;
  const bool lower = upper == transposed;
  const bool conj = transpose;
  const bool via_workspace = !left && k > 1;
  const double flops = double(n) * n * k;
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES(A.scalar_type(), "batchchol_trsm_cpu", [&] {
    const scalar_t* a = s.A.const_data_ptr<scalar_t>();
    const scalar_t* b = s.B.const_data_ptr<scalar_t>();
    scalar_t* x = X.data_ptr<scalar_t>();
    // One column, one system at a time: prefetch the factors' stream when the batch is
    // split over threads (prefetch_ahead, vec_ops.h).
    const bool prefetch = k == 1 && at::get_num_threads() > 1;
    at::parallel_for(0, s.batch, cpu::batch_grain(flops), [&](int64_t b0, int64_t b1) {
      std::vector<scalar_t> work(via_workspace ? n * k : 0);
      int64_t i = b0;
      // One column: several systems in lockstep where that pays (trsv_lockstep.h).
      if (k == 1)
        i = cpu::trsv_batch_lockstep(a, s.a_stride, b, x, n, b0, b1, lower, trans, unit_diagonal);
      for (; i < b1; ++i) {
        const scalar_t* ai = a + i * s.a_stride;
        const scalar_t* bi = b + i * n * k;
        scalar_t* xi = x + i * n * k;
        if (!via_workspace) {
          std::copy(bi, bi + n * k, xi);
          cpu::trsm_left(ai, n, xi, k, lower, trans, conj, unit_diagonal, prefetch);
          continue;
        }
        // bi, xi are k x n; work is their n x k transpose.
        scalar_t* w = work.data();
        for (int64_t c = 0; c < k; ++c)
          for (int64_t r = 0; r < n; ++r) w[r * k + c] = bi[c * n + r];
        cpu::trsm_left(ai, n, w, k, lower, trans, conj, unit_diagonal);
        for (int64_t c = 0; c < k; ++c)
          for (int64_t r = 0; r < n; ++r) xi[c * n + r] = w[r * k + c];
      }
    });
  });
  return X;
}

TORCH_LIBRARY_IMPL(batchchol, CPU, m) { m.impl("trsm", &trsm_cpu); }

}  // namespace batchchol
