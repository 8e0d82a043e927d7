// Device routines of the column-per-lane triangular solves: small systems (n <= 32)
// with several right-hand sides, real types.
//
// The warp-per-system kernels (trsm_device.cuh) give each lane a ROW of the solution
// and pass every solved entry to the other lanes, one shuffle or shared-memory
// broadcast per step: a serial chain of n steps per system, which is what held them
// at 13-47% of the roofline with 16 columns. Here each lane owns one right-hand-side
// COLUMN of one system, held in registers padded to the compile-time order N, and
// solves it alone: no lane ever waits for another. The matrix, staged once per system
// in shared memory, is read with broadcasts (every lane of a system reads the same
// address), at offsets known at compile time.
//
// The staged matrix of a system ("slot"): A's rows copied as stored, pitch LD = N + 1,
// followed by the N reciprocals of the diagonal. The solves see it as a lower
// triangular T:  T(p, q) = Ms[p * LD + q] (orientation 0) or Ms[q * LD + p] (1).
//   cols_lower solves T x = b (forward), cols_upper solves T^T x = b (backward),
// which covers every flag combination: the launcher picks the orientation and which
// solve (trsm_triangle_plan.h). Rows and columns n..N-1 of a slot stay zero and
// their reciprocals 1, so the padded entries of x never change the real ones.
#pragma once

#include "cuda/async_copy.cuh"

namespace batchchol {
namespace cuda {

template <int N>
constexpr int cols_ld() {
  return N + 1;
}

// Elements of one slot: the matrix, N reciprocals, and one more when that makes the
// count odd, so that the slots read together by a warp start in different banks.
template <int N>
constexpr int cols_slot_elems() {
  return (N * cols_ld<N>() + N) | 1;
}

template <int N, bool Orient>
__device__ __forceinline__ constexpr int cols_at(int p, int q) {
  return Orient ? q * cols_ld<N>() + p : p * cols_ld<N>() + q;
}

// Issues the asynchronous copy of the triangle of one n x n matrix (row-major at a)
// that holds T: A's lower triangle for orientation 0, its upper one for 1. The
// diagonal is skipped when it is unit. Rows and columns are spread over the warp so
// that consecutive lanes copy consecutive elements of a row.
template <typename T, int N>
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
    if (r < n && c < n && in_tri && !(unit && r == c))
      cp_async_elem(slot + r * cols_ld<N>() + c, a + r * n + c);
  }
}

// Writes the reciprocals of the staged diagonals (1 where unit or beyond n) after the
// copies have landed and the warp has synchronized; `slots` slots, from all lanes.
template <typename T, int N>
__device__ __forceinline__ void cols_invert_diagonals(T* wsm, int slots, int n, bool unit,
                                                      int lane) {
  for (int idx = lane; idx < slots * N; idx += 32) {
    const int s = idx / N;
    const int p = idx - s * N;
    T* slot = wsm + s * cols_slot_elems<N>();
    slot[N * cols_ld<N>() + p] =
        (p < n && !unit) ? T(1) / slot[p * cols_ld<N>() + p] : T(1);
  }
}

// T x = b: column j is final once scaled, then updates the rows below it. The
// updates of one column are independent, so the long chain is only the diagonal.
template <typename T, int N, bool Orient>
__device__ __forceinline__ void cols_lower(const T* __restrict__ slot, T (&x)[N]) {
  const T* inv = slot + N * cols_ld<N>();
#pragma unroll
  for (int j = 0; j < N; ++j) {
    x[j] *= inv[j];
#pragma unroll
    for (int i = j + 1; i < N; ++i) x[i] -= slot[cols_at<N, Orient>(i, j)] * x[j];
  }
}

// T^T x = b: the same, backwards, with T(j, i) for the entries above the diagonal.
template <typename T, int N, bool Orient>
__device__ __forceinline__ void cols_upper(const T* __restrict__ slot, T (&x)[N]) {
  const T* inv = slot + N * cols_ld<N>();
#pragma unroll
  for (int j = N - 1; j >= 0; --j) {
    x[j] *= inv[j];
#pragma unroll
    for (int i = 0; i < j; ++i) x[i] -= slot[cols_at<N, Orient>(j, i)] * x[j];
  }
}

}  // namespace cuda
}  // namespace batchchol
