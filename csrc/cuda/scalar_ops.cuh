// Scalar helpers shared by the CUDA device routines: the same source serves
// float, double, c10::complex<float> and c10::complex<double>.
#pragma once

#include <c10/util/complex.h>
#include <cuda_runtime.h>

#include <limits>

namespace batchchol {
namespace cuda {

template <typename T>
struct RealOf {
  using type = T;
};
template <typename R>
struct RealOf<c10::complex<R>> {
  using type = R;
};
template <typename T>
using real_t = typename RealOf<T>::type;

// What a solve writes where the metadata of a ragged batch's system is invalid.
template <typename T>
__device__ __forceinline__ T quiet_nan() {
  return T(std::numeric_limits<real_t<T>>::quiet_NaN());
}

template <typename T>
struct IsComplex {
  static constexpr bool value = false;
};
template <typename R>
struct IsComplex<c10::complex<R>> {
  static constexpr bool value = true;
};

__device__ __forceinline__ float conj_(float x) { return x; }
__device__ __forceinline__ double conj_(double x) { return x; }
template <typename R>
__device__ __forceinline__ c10::complex<R> conj_(c10::complex<R> x) {
  return c10::complex<R>(x.real(), -x.imag());
}

__device__ __forceinline__ float real_(float x) { return x; }
__device__ __forceinline__ double real_(double x) { return x; }
template <typename R>
__device__ __forceinline__ R real_(c10::complex<R> x) {
  return x.real();
}

// a * conj(b), the inner-product term of every Hermitian update.
template <typename T>
__device__ __forceinline__ T mul_conj(T a, T b) {
  return a * conj_(b);
}

// A pivot is usable only if it is positive and finite: NaN and Inf anywhere in the
// referenced triangle reach some pivot and must fail that matrix (info > 0).
template <typename R>
__device__ __forceinline__ bool pivot_ok(R d) {
  return d > R(0) && d < R(INFINITY);
}

// The pivot step's 1 / sqrt(d) as one short sequence (CUDA's rsqrt: at most 1 ulp in
// float64 and 2 in float32 by the CUDA documentation, 0.51 and 1.49 measured on an H100
// over 2 million arguments, subnormals included; no flush to zero). Float32's is
// branch-free (subnormals by a predicated rescale); float64's (sm_90 SASS) branches to a
// called slow path only for zero, negative, subnormal, infinite and NaN arguments, and
// the normal path is the hardware estimate and one refinement. A correctly rounded square
// root and division each expand to a longer sequence with a slow-path branch, and they
// sat on the chain from one pivot to the next of every register factorization, where the
// scheduler does not move the next step's work across those branches (H100,
// results/h100-2026-11-25-rsqrt-pivot-ab.txt: warp family 2-15% faster, tile 8-25%).
// The factorizations that divide by d_k multiply by 1 / sqrt(d_k) twice, a_rk first (a few
// ulp instead of 0.5; inv * inv, and 1 / d_k itself, would overflow for subnormal d_k,
// while a_rk * inv is bounded by sqrt(d_r) when A is positive definite).
__device__ __forceinline__ float rsqrt_(float d) { return rsqrtf(d); }
__device__ __forceinline__ double rsqrt_(double d) { return rsqrt(d); }

// Entry v of pivot column k scaled into L with inv = rsqrt_(d): the pivot's own row holds
// v = d and becomes d * inv = sqrt(d) (within 1.5 ulp in float64, 2.5 in float32, by the
// documented bounds), every other row v * inv, so for real types one product serves every
// row. A complex pivot row keeps a real diagonal (the imaginary part of A's diagonal is
// not referenced, as in LAPACK).
template <typename T, typename R>
__device__ __forceinline__ T scale_pivot_column(T v, bool pivot_row, R d, R inv) {
  if constexpr (IsComplex<T>::value) {
    return pivot_row ? T(d * inv) : v * inv;
  } else {
    return v * inv;
  }
}

// Warp shuffles of complex values move the two halves separately.
template <typename T>
__device__ __forceinline__ T shfl(T v, int src, int width = 32, unsigned mask = 0xffffffffu) {
  return __shfl_sync(mask, v, src, width);
}
template <typename R>
__device__ __forceinline__ c10::complex<R> shfl(c10::complex<R> v, int src, int width = 32,
                                                unsigned mask = 0xffffffffu) {
  return c10::complex<R>(__shfl_sync(mask, v.real(), src, width),
                         __shfl_sync(mask, v.imag(), src, width));
}

}  // namespace cuda
}  // namespace batchchol
