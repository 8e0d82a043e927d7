// How the kernels that stage a factor's stored triangle in shared memory (the
// column-per-lane and block-per-system families) see a trsm or potrs: as solves with
// ONE lower triangular T read from A's stored triangle,
//   T(p, q) = A[p][q] (orient false: A's lower triangle) or A[q][p] (true: its upper one),
// forward (T x = b), backward (T^T x = b) or both in turn (potrs). Every flag
// combination of trsm_view maps onto one of these; the index order stays A's, so B and
// X keep the view's row and column strides.
#pragma once

#include <c10/util/Exception.h>

#include "cuda/trsm_device.cuh"

namespace batchchol {
namespace cuda {

enum TriangleSolve { kTriForward = 0, kTriBackward = 1, kTriPotrs = 2 };

struct TrianglePlan {
  int solve;  // TriangleSolve
  bool orient;
  bool unit;
};

// trsm: the view runs forward when op(A) is lower; T is op(A) (lower) or op(A)^T (upper).
inline TrianglePlan trsm_triangle_plan(const TrsmView& v) {
  return {v.rev ? kTriBackward : kTriForward, v.rev ? !v.trans : v.trans, v.unit};
}

// potrs: v1 is the forward pass (op1 lower), v2 its transpose, so T = op1 for both.
inline TrianglePlan potrs_triangle_plan(const TrsmView& v1, const TrsmView& v2) {
  TORCH_CHECK(!v1.rev && v2.rev && v1.trans != v2.trans && !v1.unit && !v2.unit,
              "batchchol: unexpected potrs views");
  return {kTriPotrs, v1.trans, false};
}

}  // namespace cuda
}  // namespace batchchol
