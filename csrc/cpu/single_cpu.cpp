// CPU: one matrix or system of large order on LAPACK's potrf / potrs and BLAS's trsm
// through ATen.
//
// Why: the CPU kernels spread the batch over threads, one matrix per thread, with 16-byte
// vectors (a baseline x86-64 build); LAPACK puts every thread and the machine's widest
// vectors on one matrix, and blocks for the caches. 2-core VM, MKL, 2026-11-25
// (tools/single_system_solves.py --device cpu; KERNEL-NOTES, twenty-seventh round), one
// matrix, ms, routed / the CPU kernels: potrf float64 n = 384 0.615 / 1.209, 768 3.83 /
// 10.06, 1024 10.9 / 25.8; complex128 192 0.417 / 1.049, 1024 24.6 / 166.2; trsm with 16
// columns float64 384 0.091 / 0.183, 1024 0.49 / 1.26, complex128 192 0.074 / 0.211.
// Below 384 the CPU kernels lead or tie in real types (torch's potrf against them,
// float64 192: 0.217 / 0.169 ms, 256: 0.544 / 0.373, in one of the VM's phases; at 512
// they tie, 2.91 / 2.99). potrs goes with 16 or more columns and stays with the CPU
// kernels for fewer (one column, float32 n = 1024: 0.15 against torch's 0.59 ms); every
// batch of two or more stays too (two threads, two matrices: the CPU kernels led potrf,
// float64 512 3.0 against 4.5 ms).
#include "cpu/single_cpu.h"

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

#include <cmath>

#include "cpu/vec_ops.h"

namespace batchchol::cpu {

namespace {
// Smallest orders routed (the measurements above).
constexpr int64_t kSingleMinReal = 384, kSingleMinComplex = 192;
}  // namespace

bool single_applies(int64_t batch, int64_t n, bool complex, const char* switch_env) {
  if (batch != 1 || n < (complex ? kSingleMinComplex : kSingleMinReal)) return false;
  return !single_route_off(switch_env);
}

at::Tensor potrf_single(const at::Tensor& A, bool upper, at::Tensor& info) {
  const int64_t n = A.size(-1);
  // LAPACK works on column-major matrices, whose memory read row-major holds their
  // transposes: factoring A^T (a view, column-major when A is row-major) with the other
  // triangle gives a factor whose transpose is the row-major L wanted, with no transposing
  // copy (at n = 768 that copy took as long as the factorization). Real: A^T = U^T U
  // gives A = L L^T with L = U^T. Complex: A^T = conj(A) = U^H U gives A = U^T conj(U)
  // = L L^H with L = U^T. The triangle read, A^T's upper one, is A's lower one.
  const auto [factor, lapack_info] =
      at::linalg_cholesky_ex(A.mT(), /*upper=*/!upper, /*check_errors=*/false);
  at::Tensor L = factor.mT().contiguous();  // a view: factor is column-major
  // LAPACK reports a NaN pivot but passes an Inf one (sqrt(Inf) > 0), which leaves Inf on
  // L's diagonal: the first non-finite pivot counts too. A failed factor gets a NaN at
  // its failed pivot, as the CPU kernels leave one (LAPACK stops there, all finite).
  int k = lapack_info.item<int>();
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES(A.scalar_type(), "batchchol_potrf_single_cpu", [&] {
    scalar_t* l = L.data_ptr<scalar_t>();
    const int64_t limit = k > 0 ? k - 1 : n;
    for (int64_t j = 0; j < limit; ++j) {
      if (!std::isfinite(real_part(l[j * (n + 1)]))) {
        k = static_cast<int>(j) + 1;
        break;
      }
    }
    if (k > 0) l[(k - 1) * (n + 1)] = scalar_t(NAN);
  });
  info.fill_(k);
  return L;
}

}  // namespace batchchol::cpu
