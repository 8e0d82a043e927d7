// The blocked family's float32 trailing update on the FMA pipes, from slices of L21
// staged k-major (one 64-entry column of the slice per k).
//
// Why: staged row by row (pitch 33), a thread of the 4 x 4 register tiles read its
// eight operands of each k as eight scalar loads from eight rows: eight shared-memory
// wavefronts per sixteen FMAs per warp. The float32 n = 512 update ran at 75% of its
// issue slots with its memory pipes 80% busy (ncu, H100) and took 5.4 of 7.7 ms. Staged
// k-major, a thread's four rows (and four columns) are adjacent: one 16-byte load each,
// three wavefronts per sixteen FMAs.
//
// Layout: slice entry (row r, column k) at k * kKmPitch + r. The pitch of 68 floats keeps
// both sides free of bank conflicts: a staging store of a warp covers 4 rows x 8
// columns (bank (4 k + r) mod 32, all distinct), and the 16-byte loads of eight
// adjacent threads fall in distinct groups of four banks (17 k + t mod 8). Thread t's
// global loads of a slice: column 8 ((t / 32) % 4) + lane / 4, rows 4 (t / 128) +
// lane % 4 + 8 u for u = 0..7 (32-byte row segments, whole sectors).
#pragma once

#include <type_traits>

#include "cuda/potrf_block.cuh"

namespace batchchol {
namespace cuda {

// Whether blocked_update_kernel<T> stages k-major for the FMA path (float32; complex
// types keep row-major slices: their products read real and imaginary parts anyway).
template <typename T>
constexpr bool update_uses_kmajor() {
  return std::is_same_v<T, float>;
}

constexpr int kKmRows = 64, kKmPitch = kKmRows + 4;

// The slices' staging: the loads of Rows (UpdateSlices<float, 64>: eight entries per
// thread per slice, rows 8 apart) from this mapping's first entries, stored k-major.
template <typename Rows>
struct KMajorSlices : Rows {
  static_assert(Rows::kPer == kKmRows * kPanel / 256, "eight entries per thread, rows 8 apart");
  static __device__ __forceinline__ int row() {
    return 4 * (threadIdx.x / 128) + threadIdx.x % 4;
  }
  static __device__ __forceinline__ int col() {
    return 8 * ((threadIdx.x / 32) % 4) + (threadIdx.x % 32) / 4;
  }
  template <typename T>
  __device__ __forceinline__ void store(T* pi, T* pj) const {
    const int at = col() * kKmPitch + row();
#pragma unroll
    for (int u = 0; u < Rows::kPer; ++u) {
      pi[at + 8 * u] = this->vi[u];
      pj[at + 8 * u] = this->vj[u];
    }
  }
};

// acc[a][c] += pi(r0 + a, k) pj(c0 + c, k) over the 32 columns k of the staged slices
// (r0, c0 multiples of 4).
__device__ __forceinline__ void fma_kmajor_panel(float (&acc)[4][4], const float* pi,
                                                 const float* pj, int r0, int c0) {
  const float* ai = pi + r0;
  const float* bj = pj + c0;
#pragma unroll 8
  for (int k = 0; k < kPanel; ++k) {
    const float4 a = *reinterpret_cast<const float4*>(ai + k * kKmPitch);
    const float4 b = *reinterpret_cast<const float4*>(bj + k * kKmPitch);
    const float av[4] = {a.x, a.y, a.z, a.w}, bv[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[r][c] += av[r] * bv[c];
  }
}

}  // namespace cuda
}  // namespace batchchol
