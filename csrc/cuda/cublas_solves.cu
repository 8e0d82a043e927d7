// Triangular solves through ATen's linalg_solve_triangular (cuBLAS trsm) for the sizes
// where it beats this library's warp-per-system kernels, so that trsm and potrs (and
// posv's unfused path) are never slower than torch.linalg's own solves.
//
// H100 sweep, 2026-11-22 (benchmarks/bench_fixed.py; results/h100-2026-11-22-*):
//   trsm, ours / solve_triangular: 0.2-0.97x for n >= 64; 1.0-1.24x for n = 32 (one
//   float64 point at 0.95x); 0.5x for n <= 16 with one right-hand side and 0.9-1.2x
//   with 16 (0.9x at n = 4).
//   potrs, ours / the faster cholesky_solve: 0.57-0.92x for n >= 128; two
//   solve_triangular calls are 1.4-1.9x faster than cholesky_solve there.
// BATCHCHOL_TRSM_BACKEND = ours | cublas forces one path for both ops (tuning, tests;
// read at every call).
#include <ATen/ATen.h>

#include <cstdlib>
#include <cstring>

#include "cuda/trsm_launch.h"

namespace batchchol {
namespace cuda {

namespace {

int forced_backend() {  // 0: the table, 1: ours, 2: cuBLAS
  const char* env = std::getenv("BATCHCHOL_TRSM_BACKEND");
  if (env == nullptr) return 0;
  if (std::strcmp(env, "ours") == 0) return 1;
  if (std::strcmp(env, "cublas") == 0) return 2;
  return 0;
}

// A [batch_a, n, n]; a_stride 0: every system uses A[0] (broadcast).
at::Tensor systems_matrix(const at::Tensor& A, int64_t a_stride) {
  return a_stride == 0 ? A.narrow(0, 0, 1) : A;
}

}  // namespace

bool trsm_prefers_cublas(int64_t n, int64_t k) {
  if (const int f = forced_backend()) return f == 2;
  if (n > 32) return true;
  if (n > 16) return false;
  return !(n >= 8 && k >= 16);
}

bool potrs_prefers_cublas(int64_t n, int64_t /*k*/) {
  if (const int f = forced_backend()) return f == 2;
  return n >= 128;
}

void trsm_cublas(const at::Tensor& A, int64_t a_stride, const at::Tensor& B, at::Tensor& X,
                 bool upper, bool left, bool transpose, bool unit_diagonal) {
  const at::Tensor M = systems_matrix(A, a_stride);
  // op(A) = A^H is upper when A is lower: solve with the conjugate-transposed view.
  const at::Tensor Mop = transpose ? M.mH() : M;
  X.copy_(at::linalg_solve_triangular(Mop, B, transpose ? !upper : upper, left, unit_diagonal));
}

void potrs_cublas(const at::Tensor& L, int64_t l_stride, const at::Tensor& B, at::Tensor& X,
                  bool upper) {
  const at::Tensor M = systems_matrix(L, l_stride);
  // lower: L Y = B, L^H X = Y;  upper: U^H Y = B, U X = Y.
  const at::Tensor first = upper ? M.mH() : M;
  const at::Tensor Y = at::linalg_solve_triangular(first, B, /*upper=*/false, /*left=*/true);
  X.copy_(at::linalg_solve_triangular(first.mH(), Y, /*upper=*/true, /*left=*/true));
}

}  // namespace cuda
}  // namespace batchchol
