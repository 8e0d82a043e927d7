// Flattening of [*, n, n] batches (and broadcast right-hand sides) into the
// [batch, rows, cols] contiguous layout that every CPU and CUDA kernel works on.
// Backends call these after the checks of common/checks.h have passed.
#pragma once

#include <ATen/ATen.h>

#include <vector>

namespace batchchol {

// Number of matrices in a [*, r, c] tensor (1 for a plain matrix, 0 for an empty batch).
int64_t batch_count(const at::Tensor& t);

// t [*, r, c] as a contiguous [batch, r, c] tensor (a view when t is already contiguous;
// t itself when it already is one).
at::Tensor flatten_batch(const at::Tensor& t);

// t (contiguous, count * rows * cols elements) as [count, rows, cols]: t itself when it
// has that shape already. Every view is a dispatcher call and a new TensorImpl, and host
// time is a large part of a small batch's call (tools/fixed_call_cost.py).
at::Tensor view_batch(const at::Tensor& t, int64_t count, int64_t rows, int64_t cols);

// A square batch A [*, n, n] and right-hand sides B [*, r, c] broadcast against each other.
struct SolveBatch {
  at::Tensor A;                    // [batch_a, n, n] contiguous, batch_a == 1 or batch
  // A holds the transposes (not conjugated) of the matrices: taken when the caller
  // allows it and A arrives column-major, e.g. a factor from torch.linalg.cholesky,
  // so that the kernels read it in place instead of copying it.
  bool a_transposed = false;
  at::Tensor B;                    // [batch, r, c] contiguous
  int64_t batch = 0;               // number of systems after broadcasting
  int64_t n = 0;                   // order of A
  int64_t rows = 0, cols = 0;      // shape of each right-hand side block
  int64_t a_stride = 0;            // elements between the A of consecutive systems (0: shared)
  std::vector<int64_t> out_shape;  // broadcast batch shape + [r, c]
  // True when every system has its own A, stored in A's own batch order (posv can
  // then write L and info per system).
  bool a_per_system = false;
};

// allow_transposed: the caller's kernels can read transposed matrices (a_transposed).
SolveBatch make_solve_batch(const at::Tensor& A, const at::Tensor& B,
                            bool allow_transposed = false);

}  // namespace batchchol
