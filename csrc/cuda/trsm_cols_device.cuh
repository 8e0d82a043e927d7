// Device routines of the column-per-lane triangular solves: small systems (n <= 32)
// with several right-hand sides, real types.
//
// The warp-per-system kernels (trsm_warp_solve.cuh) give each lane a ROW of the solution
// and pass every solved entry to the other lanes, one shuffle or shared-memory
// broadcast per step: a serial chain of n steps per system, which is what held them
// at 13-47% of the roofline with 16 columns. Here each lane owns one right-hand-side
// COLUMN of one system, held in registers padded to the compile-time order N, and
// solves it alone: no lane ever waits for another. The matrix, staged once per system
// in shared memory, is read with broadcasts (every lane of a system reads the same
// address), at offsets known at compile time.
//
// The staged matrix of a system ("slot"), followed by the N reciprocals of the
// diagonal, in one of two layouts (the launcher picks one per order):
//   square (Packed = false): A's rows as stored, pitch LD = N + 1;
//     T(p, q) = Ms[p * LD + q] (orientation 0) or Ms[q * LD + p] (1);
//   packed (true): only the stored triangle, by A's rows, about half the size, so a
//     warp holds twice the systems: A's lower triangle row-packed (orientation 0,
//     packed_triangle.cuh) or its upper one, row r holding columns r..N-1 (1).
// The solves see it as a lower triangular T, T(p, q) = A[p][q] (orientation 0) or
// A[q][p] (1), at offsets known at compile time in either layout.
//   cols_lower solves T x = b (forward), cols_upper solves T^T x = b (backward),
// which covers every flag combination: the launcher picks the orientation and which
// solve (trsm_triangle_plan.h). Rows and columns n..N-1 of a slot stay zero and
// their reciprocals 1, so the padded entries of x never change the real ones.
#pragma once

#include "cuda/async_copy.cuh"
#include "cuda/packed_triangle.cuh"

namespace batchchol {
namespace cuda {

template <int N>
constexpr int cols_ld() {
  return N + 1;
}

// Elements of the staged triangle (square: its whole N x LD block).
template <int N, bool Packed>
constexpr int cols_tri_elems() {
  return Packed ? lo_row(N) : N * cols_ld<N>();
}

// Elements of one slot: the triangle, N reciprocals, and one more when that makes the
// count odd, so that the slots read together by a warp start in different banks.
template <int N, bool Packed>
constexpr int cols_slot_elems() {
  return (cols_tri_elems<N, Packed>() + N) | 1;
}

// Where A[r][c] of the stored triangle is staged (orientation 0: c <= r, 1: c >= r).
template <int N, bool Packed>
__device__ __forceinline__ constexpr int cols_dest(int r, int c, bool orient) {
  if constexpr (Packed) {
    return orient ? up_row<N>(r) + (c - r) : lo_row(r) + c;
  } else {
    return r * cols_ld<N>() + c;
  }
}

// Offset of T(p, q), p >= q: A[p][q] (orientation 0) or A[q][p] (1).
template <int N, bool Orient, bool Packed>
__device__ __forceinline__ constexpr int cols_at(int p, int q) {
  return Orient ? cols_dest<N, Packed>(q, p, true) : cols_dest<N, Packed>(p, q, false);
}

// Issues the asynchronous copy of the triangle of one n x n matrix (row-major at a)
// that holds T: A's lower triangle for orientation 0, its upper one for 1. The
// diagonal is skipped when it is unit. Rows and columns are spread over the warp so
// that consecutive lanes copy consecutive elements of a row. ZeroPad: the slot last
// held a matrix of another order, so the triangle's entries past n are zeroed (by the
// lane that would copy them: no other lane writes there).
template <typename T, int N, bool Packed, bool ZeroPad = false>
__device__ __forceinline__ void cols_issue_matrix(const T* __restrict__ a, int n, bool orient,
                                                  bool unit, T* slot, int lane) {
  constexpr int kRowsPerPass = N >= 32 ? 1 : 32 / N;
  constexpr int kPasses = (N + kRowsPerPass - 1) / kRowsPerPass;
  const int c = lane % N;
  const int r0 = lane / N;
#pragma unroll
  for (int t = 0; t < kPasses; ++t) {
    const int r = r0 + t * kRowsPerPass;
    const bool in_tri = orient ? c >= r : c <= r;
    if (r < n && c < n && in_tri && !(unit && r == c)) {
      cp_async_elem(slot + cols_dest<N, Packed>(r, c, orient), a + r * n + c);
    } else if (ZeroPad && in_tri && !(unit && r == c)) {
      slot[cols_dest<N, Packed>(r, c, orient)] = T(0);
    }
  }
}

// Writes the reciprocals of the staged diagonals (1 where unit or beyond the order)
// after the copies have landed and the warp has synchronized; `slots` slots, from all
// lanes; order_of(s) is slot s's order.
template <typename T, int N, bool Packed, typename Order>
__device__ __forceinline__ void cols_invert_diagonals(T* wsm, int slots, bool unit, bool orient,
                                                      int lane, Order&& order_of) {
  for (int idx = lane; idx < slots * N; idx += 32) {
    const int s = idx / N;
    const int p = idx - s * N;
    T* slot = wsm + s * cols_slot_elems<N, Packed>();
    slot[cols_tri_elems<N, Packed>() + p] =
        (p < order_of(s) && !unit) ? T(1) / slot[cols_dest<N, Packed>(p, p, orient)] : T(1);
  }
}

// T x = b: column j is final once scaled, then updates the rows below it. The
// updates of one column are independent, so the long chain is only the diagonal.
template <typename T, int N, bool Orient, bool Packed>
__device__ __forceinline__ void cols_lower(const T* __restrict__ slot, T (&x)[N]) {
  const T* inv = slot + cols_tri_elems<N, Packed>();
#pragma unroll
  for (int j = 0; j < N; ++j) {
    x[j] *= inv[j];
#pragma unroll
    for (int i = j + 1; i < N; ++i) x[i] -= slot[cols_at<N, Orient, Packed>(i, j)] * x[j];
  }
}

// T^T x = b: the same, backwards, with T(j, i) for the entries above the diagonal.
template <typename T, int N, bool Orient, bool Packed>
__device__ __forceinline__ void cols_upper(const T* __restrict__ slot, T (&x)[N]) {
  const T* inv = slot + cols_tri_elems<N, Packed>();
#pragma unroll
  for (int j = N - 1; j >= 0; --j) {
    x[j] *= inv[j];
#pragma unroll
    for (int i = 0; i < j; ++i) x[i] -= slot[cols_at<N, Orient, Packed>(j, i)] * x[j];
  }
}

// The slot pointer again, as a value the compiler cannot see through, produced after
// `after` is known. A potrs reads every staged entry in both passes, and the unchanged
// shared memory lets the compiler keep the forward pass's loads in registers for the
// backward one: 255 registers and spills with the packed layout. Reading through this
// pointer makes the backward pass load its entries itself.
template <typename T>
__device__ __forceinline__ const T* cols_reload_pointer(const T* slot, T after) {
  unsigned long long a = reinterpret_cast<unsigned long long>(slot);
  if constexpr (sizeof(T) == 8) {
    asm volatile("mov.b64 %0, %0;" : "+l"(a) : "d"(after));
  } else {
    asm volatile("mov.b64 %0, %0;" : "+l"(a) : "f"(after));
  }
  return reinterpret_cast<const T*>(a);
}

}  // namespace cuda
}  // namespace batchchol
