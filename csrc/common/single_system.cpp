#include "common/single_system.h"

#include <ATen/ATen.h>

#include <cstdlib>

namespace batchchol {

bool single_route_off(const char* name) {
  const char* env = std::getenv(name);
  return env && std::atoi(env) == 0;
}

// ATen's results are column-major; the ops return contiguous tensors.
at::Tensor potrs_single(const at::Tensor& L, const at::Tensor& B, bool upper) {
  return at::cholesky_solve(B, L, upper).contiguous();
}

at::Tensor trsm_single(const at::Tensor& A, const at::Tensor& B, bool upper, bool left,
                       bool transpose, bool unit_diagonal) {
  // op(A) = A^H: the other triangle of the conjugate transpose, a view.
  const at::Tensor opA = transpose ? A.mH() : A;
  return at::linalg_solve_triangular(opA, B, transpose ? !upper : upper, left, unit_diagonal)
      .contiguous();
}

}  // namespace batchchol
