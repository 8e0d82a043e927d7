// Contiguous vector primitives (dot products and updates) of the CPU kernels.
// The build has no -ffast-math, so a plain floating-point reduction loop is not
// vectorized: the real types use explicit vectors (below); the complex dot products
// run on the interleaved real/imaginary parts under `omp simd reduction`, which
// licenses the reassociation for that loop only (an omp reduction cannot name
// c10::complex, and complex speed matters less here).
#pragma once

#include <c10/util/complex.h>

#include <cstdint>
#include <type_traits>

namespace batchchol::cpu {

template <typename T>
struct real_of {
  using type = T;
};
template <typename T>
struct real_of<c10::complex<T>> {
  using type = T;
};
template <typename T>
using real_t = typename real_of<T>::type;

template <typename T>
constexpr bool is_complex_v = !std::is_same_v<T, real_t<T>>;

template <typename T>
inline real_t<T> real_part(T v) {
  if constexpr (is_complex_v<T>) {
    return v.real();
  } else {
    return v;
  }
}

// cj<true>(v) = conj(v), cj<false>(v) = v.
template <bool Conj, typename T>
inline T cj(T v) {
  if constexpr (Conj && is_complex_v<T>) {
    return T(v.real(), -v.imag());
  } else {
    return v;
  }
}

// GCC/Clang vector extensions for the real types: explicit 16-byte vectors (one SSE
// register on a baseline x86-64 build, NEON on ARM) give short-loop code with no alias checks or
// peeling, which matters because most loops here run over 4 to 64 elements.
#if defined(__GNUC__)
#define BATCHCHOL_CPU_VEC 1
template <typename T>
struct vec_type;
template <>
struct vec_type<float> {
  typedef float type __attribute__((vector_size(16)));
};
template <>
struct vec_type<double> {
  typedef double type __attribute__((vector_size(16)));
};
template <typename T>
using vec_t = typename vec_type<T>::type;
template <typename T>
constexpr int64_t kW = 16 / sizeof(T);

template <typename T>
inline vec_t<T> vload(const T* p) {
  vec_t<T> v;
  __builtin_memcpy(&v, p, sizeof(v));
  return v;
}
template <typename T>
inline void vstore(T* p, vec_t<T> v) {
  __builtin_memcpy(p, &v, sizeof(v));
}
template <typename T>
inline T hsum(vec_t<T> v) {
  T s = 0;
  for (int64_t l = 0; l < kW<T>; ++l) s += v[l];
  return s;
}
#endif

// sum_p cj(a[p]) * x[p]
template <bool ConjA, typename T>
inline T dot_cj(const T* a, const T* x, int64_t len) {
  if constexpr (is_complex_v<T>) {
    using R = real_t<T>;
    const R* ar = reinterpret_cast<const R*>(a);
    const R* xr = reinterpret_cast<const R*>(x);
    constexpr R sgn = ConjA ? R(-1) : R(1);
    R re = 0, im = 0;
#pragma omp simd reduction(+ : re, im)
    for (int64_t p = 0; p < len; ++p) {
      const R a0 = ar[2 * p], a1 = sgn * ar[2 * p + 1];
      const R x0 = xr[2 * p], x1 = xr[2 * p + 1];
      re += a0 * x0 - a1 * x1;
      im += a0 * x1 + a1 * x0;
    }
    return T(re, im);
  } else {
    int64_t p = 0;
    T s = 0;
#ifdef BATCHCHOL_CPU_VEC
    constexpr int64_t W = kW<T>;
    vec_t<T> s0 = {}, s1 = {};
    for (; p + 2 * W <= len; p += 2 * W) {
      s0 += vload(a + p) * vload(x + p);
      s1 += vload(a + p + W) * vload(x + p + W);
    }
    if (p + W <= len) {
      s0 += vload(a + p) * vload(x + p);
      p += W;
    }
    s = hsum<T>(s0 + s1);
#endif
    for (; p < len; ++p) s += a[p] * x[p];
    return s;
  }
}

// s[r] = sum_p conj(a[p]) * x_r[p] for four vectors x_r: a[p] is loaded once for all
// four, which is what makes the row-blocked Cholesky cheaper than four dot_cj calls.
template <typename T>
inline void dot_cj4(const T* a, const T* x0, const T* x1, const T* x2, const T* x3, int64_t len,
                    T* s) {
  if constexpr (is_complex_v<T>) {
    s[0] = dot_cj<true>(a, x0, len);
    s[1] = dot_cj<true>(a, x1, len);
    s[2] = dot_cj<true>(a, x2, len);
    s[3] = dot_cj<true>(a, x3, len);
  } else {
    int64_t p = 0;
    T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
#ifdef BATCHCHOL_CPU_VEC
    constexpr int64_t W = kW<T>;
    vec_t<T> v0 = {}, v1 = {}, v2 = {}, v3 = {};
    for (; p + W <= len; p += W) {
      const vec_t<T> ap = vload(a + p);
      v0 += ap * vload(x0 + p);
      v1 += ap * vload(x1 + p);
      v2 += ap * vload(x2 + p);
      v3 += ap * vload(x3 + p);
    }
    s0 = hsum<T>(v0);
    s1 = hsum<T>(v1);
    s2 = hsum<T>(v2);
    s3 = hsum<T>(v3);
#endif
    for (; p < len; ++p) {
      const T ap = a[p];
      s0 += ap * x0[p];
      s1 += ap * x1[p];
      s2 += ap * x2[p];
      s3 += ap * x3[p];
    }
    s[0] = s0;
    s[1] = s1;
    s[2] = s2;
    s[3] = s3;
  }
}

// y[p] -= alpha * x[p]   (y and x never overlap at the call sites)
template <typename T>
inline void axpy_sub(T* __restrict y, const T* __restrict x, T alpha, int64_t len) {
  int64_t p = 0;
#ifdef BATCHCHOL_CPU_VEC
  if constexpr (!is_complex_v<T>) {
    for (; p + kW<T> <= len; p += kW<T>) vstore(y + p, vload(y + p) - alpha * vload(x + p));
  }
#endif
  for (; p < len; ++p) y[p] -= alpha * x[p];
}

// Software prefetch of the cache lines kPrefetchAhead bytes past row[0 .. len).
// One-column triangular solves stream a batch's factors and are latency-bound. On the
// project's 2-core VM (10,000 float64 n = 32 systems, two threads) trsm took 2.8-3.3 ms
// without it and 2.5-2.9 ms with it (in-process A/B; torch 3.7-3.9 ms); in phases where
// that VM's two threads ran no faster than one, 3.0-4.5 ms without and 2.2-2.5 with. One
// thread was up to 20% slower with it (tools/cpu_trsv_stream_probe.cpp: its hardware
// prefetchers keep up), so callers ask for it only when the batch is split over several
// threads (results/cpu2core-2026-11-23-trsv-prefetch-probe.txt). A prefetch past the end
// of a buffer never faults.
constexpr int64_t kPrefetchAhead = 1024;

template <typename T>
inline void prefetch_ahead(const T* row, int64_t len) {
  const char* p = reinterpret_cast<const char*>(row) + kPrefetchAhead;
  const char* end = reinterpret_cast<const char*>(row + len) + kPrefetchAhead;
  for (; p < end; p += 64) __builtin_prefetch(p, 0, 3);
}

// y[p] -= alpha * cj(a[p])
template <bool ConjA, typename T>
inline void axpy_sub_cj(T* __restrict y, const T* __restrict a, T alpha, int64_t len) {
  if constexpr (!is_complex_v<T>) {
    axpy_sub(y, a, alpha, len);
  } else {
#pragma omp simd
    for (int64_t p = 0; p < len; ++p) y[p] -= alpha * cj<ConjA>(a[p]);
  }
}

// y[p] -= a0*x0[p] + a1*x1[p] + a2*x2[p] + a3*x3[p]: one load and store of y for four
// updates, which the multi-right-hand-side solves are bound by.
template <typename T>
inline void axpy4_sub(T* __restrict y, const T* __restrict x0, const T* __restrict x1,
                      const T* __restrict x2, const T* __restrict x3, T a0, T a1, T a2, T a3,
                      int64_t len) {
  int64_t p = 0;
#ifdef BATCHCHOL_CPU_VEC
  if constexpr (!is_complex_v<T>) {
    for (; p + kW<T> <= len; p += kW<T>)
      vstore(y + p, vload(y + p) - (a0 * vload(x0 + p) + a1 * vload(x1 + p)) -
                        (a2 * vload(x2 + p) + a3 * vload(x3 + p)));
  }
#endif
  for (; p < len; ++p) y[p] -= (a0 * x0[p] + a1 * x1[p]) + (a2 * x2[p] + a3 * x3[p]);
}

template <typename T>
inline void scale(T* __restrict y, T alpha, int64_t len) {
  int64_t p = 0;
#ifdef BATCHCHOL_CPU_VEC
  if constexpr (!is_complex_v<T>) {
    for (; p + kW<T> <= len; p += kW<T>) vstore(y + p, vload(y + p) * alpha);
  }
#endif
  for (; p < len; ++p) y[p] *= alpha;
}

}  // namespace batchchol::cpu
