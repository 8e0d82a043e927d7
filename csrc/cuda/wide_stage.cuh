// Staging copies of the wide family (wide_kernels.cuh, wide_solve.cuh, wide_copy_out.cuh):
// stage_copy.cuh's square layout, with the copies the register families had before the
// split at 16-byte boundaries (stage_copy.cuh's AlignedSplit): 16-byte vectors when the
// matrix starts on a boundary and holds whole vectors (`vec`), else element by element.
// The wide kernels stay on these because with the split copies compute-sanitizer
// racecheck reported hazards in them (H200, forty-sixth round,
// benchmarks/results/h200-2026-11-28-round46-checks.txt): between the copy-out's pivot
// writes and its reads of them (WideFactorOut), in the forced four-warp kernel at n = 97
// and 112 and once at three warps, where these copies show none (the same probe on the
// previous build). The warp and warp64 kernels with the split copies were clean. Not
// understood yet, so not taken.
#pragma once

#include <cstdint>
#include <cstring>

#include "cuda/stage_copy.cuh"

namespace batchchol {
namespace cuda {

// Copies `total` elements (one matrix) from global memory into the square layout: with
// `vec` (g 16-byte aligned, total a multiple of V) 16-byte loads, U in flight per thread
// before the first shared-memory store, else element by element. N: see stage_locate.
template <typename T, int U = 4, int N = 0>
__device__ __forceinline__ void wide_stage_in(T* __restrict__ s, const T* __restrict__ g,
                                              int total, const StageLayout& lay, bool vec,
                                              bool upper) {
  if (vec) {
    constexpr int V = 16 / sizeof(T);
    constexpr bool kRows = N > 0 && N % V == 0;
    const int nvec = total / V;
    const uint4* gv = reinterpret_cast<const uint4*>(g);
    for (int v0 = threadIdx.x; v0 < nvec; v0 += U * blockDim.x) {
      uint4 buf[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int v = v0 + u * blockDim.x;
        if (v < nvec) buf[u] = __ldg(gv + v);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int v = v0 + u * blockDim.x;
        if (v < nvec) {
          T vals[V];
          memcpy(vals, &buf[u], sizeof(vals));
          int m, i, j;
          stage_locate<N>(lay, uint32_t(v * V), m, i, j);
          if constexpr (kRows) {
            T* dst = s + m * lay.ms + i * lay.pitch + j;
#pragma unroll
            for (int w = 0; w < V; ++w) dst[w] = vals[w];
          } else {
#pragma unroll
            for (int w = 0; w < V; ++w) {
              s[m * lay.ms + i * lay.pitch + j] = vals[w];
              stage_advance<N>(lay, m, i, j);
            }
          }
        }
      }
    }
  } else {
    for (int e0 = threadIdx.x; e0 < total; e0 += U * blockDim.x) {
      T buf[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int e = e0 + u * blockDim.x;
        if (e < total) buf[u] = g[e];
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int e = e0 + u * blockDim.x;
        if (e < total) {
          int m, i, j;
          stage_locate<N>(lay, uint32_t(e), m, i, j);
          s[m * lay.ms + i * lay.pitch + j] = buf[u];
        }
      }
    }
  }
}

// Copies the staged factor out, zeroing the other triangle; each kept entry (i, j) goes
// through out(i, j, v) (WideFactorOut forms the factor from the raw stage).
template <typename T, int N = 0, typename Out = StagedAsIs>
__device__ __forceinline__ void wide_stage_out(T* __restrict__ g, const T* __restrict__ s,
                                               int total, const StageLayout& lay, bool vec,
                                               bool upper, Out out = {}) {
  if (vec) {
    constexpr int V = 16 / sizeof(T);
    const int nvec = total / V;
    uint4* gv = reinterpret_cast<uint4*>(g);
    for (int v = threadIdx.x; v < nvec; v += blockDim.x) {
      T vals[V];
      int m, i, j;
      stage_locate<N>(lay, uint32_t(v * V), m, i, j);
      if constexpr (N > 0 && N % V == 0) {
        const T* src = s + m * lay.ms + i * lay.pitch + j;
#pragma unroll
        for (int w = 0; w < V; ++w) {
          const bool keep = upper ? j + w >= i : j + w <= i;
          vals[w] = keep ? out(i, j + w, src[w]) : T(0);
        }
      } else {
#pragma unroll
        for (int w = 0; w < V; ++w) {
          const bool keep = upper ? j >= i : j <= i;
          vals[w] = keep ? out(i, j, s[m * lay.ms + i * lay.pitch + j]) : T(0);
          stage_advance<N>(lay, m, i, j);
        }
      }
      uint4 packed;
      memcpy(&packed, vals, sizeof(packed));
      gv[v] = packed;
    }
  } else {
    for (int e = threadIdx.x; e < total; e += blockDim.x) {
      int m, i, j;
      stage_locate<N>(lay, uint32_t(e), m, i, j);
      const bool keep = upper ? j >= i : j <= i;
      g[e] = keep ? out(i, j, s[m * lay.ms + i * lay.pitch + j]) : T(0);
    }
  }
}

// With the order as a constant when it is N (stage_in_exact / stage_out_exact).
template <typename T, int U, int N>
__device__ __forceinline__ void wide_stage_in_exact(T* __restrict__ s, const T* __restrict__ g,
                                                    int total, const StageLayout& lay, bool vec,
                                                    bool upper) {
  if (lay.n == N) {
    wide_stage_in<T, U, N>(s, g, total, lay, vec, upper);
  } else {
    wide_stage_in<T, U>(s, g, total, lay, vec, upper);
  }
}

template <typename T, int N, typename Out = StagedAsIs>
__device__ __forceinline__ void wide_stage_out_exact(T* __restrict__ g, const T* __restrict__ s,
                                                     int total, const StageLayout& lay, bool vec,
                                                     bool upper, Out out = {}) {
  if (lay.n == N) {
    wide_stage_out<T, N>(g, s, total, lay, vec, upper, out);
  } else {
    wide_stage_out<T>(g, s, total, lay, vec, upper, out);
  }
}

}  // namespace cuda
}  // namespace batchchol
