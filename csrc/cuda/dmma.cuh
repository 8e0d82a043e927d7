// The float64 tensor-core instruction mma.sync.m8n8k4.f64 (sm_80 and later), shared by
// the blocked family's trailing and left-looking updates (update_dmma.cuh,
// blocked_left.cuh), the tile families' trailing update (tile_chol.cuh) and the
// warp-per-system solves' products (trsm_warp_solve.cuh). Callers stay off it below
// sm_80: by dmma_available() in device code, or by the host's choice of kernel instance
// (the device's compute capability), since a launched template's arguments must not
// depend on __CUDA_ARCH__.
//
// Fragments (PTX ISA): lane l holds A(l / 4, l % 4) of the 8 x 4 A, B(l % 4, l / 4) of
// the 4 x 8 B and C(l / 4, 2 (l % 4) + e), e = 0, 1, of the 8 x 8 accumulator. Products
// and sums are IEEE float64 (no reduced-precision inputs, unlike TF32).
#pragma once

namespace batchchol {
namespace cuda {

// Whether the float64 MMA exists where this is compiled (the host pass: assumed, so that
// host-side sizes cover the MMA paths).
__host__ __device__ constexpr bool dmma_available() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  return false;
#else
  return true;
#endif
}

// d += a b for one 8 x 8 x 4 product.
__device__ __forceinline__ void dmma_m8n8k4(double (&d)[2], double a, double b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
      : "+d"(d[0]), "+d"(d[1])
      : "d"(a), "d"(b));
#elif defined(__CUDA_ARCH__)
  __trap();  // callers test dmma_available() and stay off this path below sm_80
#endif
}

}  // namespace cuda
}  // namespace batchchol
