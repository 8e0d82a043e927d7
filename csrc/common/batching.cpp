#include "common/batching.h"

#include <ATen/ExpandUtils.h>
#include <ATen/TensorGeometry.h>
#include <c10/util/SmallVector.h>

#include <utility>

namespace batchchol {

int64_t batch_count(const at::Tensor& t) {
  int64_t count = 1;
  for (int64_t d = 0; d < t.dim() - 2; ++d) count *= t.size(d);
  return count;
}

at::Tensor flatten_batch(const at::Tensor& t) {
  if (t.dim() == 3 && t.is_contiguous()) return t;
  return t.reshape({batch_count(t), t.size(-2), t.size(-1)}).contiguous();
}

// A.mT().is_contiguous() without the view (two dispatcher calls on every solve of a
// column-major factor): ATen's contiguity test on A's geometry with the last two swapped.
static bool transposed_contiguous(const at::Tensor& A) {
  c10::SmallVector<int64_t, 8> sizes(A.sizes().begin(), A.sizes().end());
  c10::SmallVector<int64_t, 8> strides(A.strides().begin(), A.strides().end());
  const size_t d = sizes.size();
  std::swap(sizes[d - 2], sizes[d - 1]);
  std::swap(strides[d - 2], strides[d - 1]);
  return at::geometry_is_contiguous(sizes, strides);
}

at::Tensor view_batch(const at::Tensor& t, int64_t count, int64_t rows, int64_t cols) {
  if (t.dim() == 3 && t.size(0) == count && t.size(1) == rows && t.size(2) == cols) return t;
  return t.view({count, rows, cols});
}

SolveBatch make_solve_batch(const at::Tensor& A, const at::Tensor& B, bool allow_transposed) {
  SolveBatch s;
  s.n = A.size(-1);
  s.rows = B.size(-2);
  s.cols = B.size(-1);
  const auto a_batch = A.sizes().slice(0, A.dim() - 2);
  const auto b_batch = B.sizes().slice(0, B.dim() - 2);
  const auto batch_shape = at::infer_size(a_batch, b_batch);

  std::vector<int64_t> b_full(batch_shape.begin(), batch_shape.end());
  b_full.push_back(s.rows);
  b_full.push_back(s.cols);
  s.out_shape = b_full;
  s.batch = 1;
  for (auto d : batch_shape) s.batch *= d;

  const int64_t a_count = batch_count(A);
  const bool col_major = allow_transposed && !A.is_contiguous() && transposed_contiguous(A);
  if (col_major && (a_count == s.batch || a_count == 1)) {
    s.A = flatten_batch(A.mT());  // a view: the transposes are contiguous
    s.a_stride = a_count == 1 ? 0 : s.n * s.n;
    s.a_per_system = a_count == s.batch;
    s.a_transposed = true;
  } else if (a_count == s.batch) {
    // Same number of systems: A's batch order equals the broadcast order unless
    // A only differs by leading size-1 dims, which a reshape handles.
    s.A = flatten_batch(A);
    s.a_stride = s.n * s.n;
    s.a_per_system = true;
  } else if (a_count == 1) {
    // One matrix shared by all right-hand sides: no copy, stride 0.
    s.A = flatten_batch(A);
    s.a_stride = 0;
  } else {
    std::vector<int64_t> a_full(batch_shape.begin(), batch_shape.end());
    a_full.push_back(s.n);
    a_full.push_back(s.n);
    s.A = A.expand(a_full).reshape({s.batch, s.n, s.n}).contiguous();
    s.a_stride = s.n * s.n;
  }
  // Without broadcasting B needs no expand (nor, contiguous [batch, r, c], any view).
  s.B = B.sizes().equals(b_full) ? flatten_batch(B)
                                 : B.expand(b_full).reshape({s.batch, s.rows, s.cols}).contiguous();
  return s;
}

}  // namespace batchchol
