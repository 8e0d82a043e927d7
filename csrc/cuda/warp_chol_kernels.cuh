// Kernel templates of the warp family (warp_chol_device.cuh): each thread block stages
// a contiguous chunk of the batch in shared memory with wide coalesced copies, each
// group of P lanes factors (and for posv, solves) one matrix in registers, and the
// block writes the chunk back with the same copies.
//
// Shared-memory layout of a chunk (StageLayout): matrix m at m * ms, row i at
// i * pitch, pitch odd and ms = P * pitch (mod 32). Lane l = P g + q of a warp reading
// row q + P t of its matrix g then touches address l * pitch + const (mod 32): one
// bank per lane, and the transposed read (upper) touches P (g * pitch mod 32/P) + q:
// also one bank per lane. The same holds per half warp for 8-byte elements.
#pragma once

#include <cstdint>
#include <cstring>

#include "cuda/fast_div.cuh"
#include "cuda/warp_chol_device.cuh"

namespace batchchol {
namespace cuda {

struct StageLayout {
  int n = 0, pitch = 1, ms = 1;
  FastDiv by_nn, by_n;
};

template <int P>
__host__ __device__ inline StageLayout make_stage_layout(int n) {
  StageLayout s;
  s.n = n;
  s.pitch = n | 1;
  s.ms = n * s.pitch + ((((P - n) * s.pitch) % 32) + 32) % 32;
  s.by_nn = FastDiv(uint32_t(n) * uint32_t(n));
  s.by_n = FastDiv(uint32_t(n));
  return s;
}

// (matrix, row, column) of element e of a dense chunk, and its shared-memory index.
// N > 0 is the order as a compile-time constant (lay.n == N): the divisions become
// shifts or multiply-highs by constants and, when a 16-byte vector never crosses a row
// (N a multiple of its elements), the per-element carry below disappears. The exact
// orders are the hot ones (every benchmarked n of the warp kernels), and the index
// arithmetic was most of the staging loops' instructions.
template <int N = 0>
__device__ __forceinline__ void stage_locate(const StageLayout& lay, uint32_t e, int& m, int& i,
                                             int& j) {
  if constexpr (N > 0) {
    constexpr uint32_t kNN = uint32_t(N) * uint32_t(N);
    const uint32_t rem = e % kNN;
    m = int(e / kNN), i = int(rem / uint32_t(N)), j = int(rem % uint32_t(N));
  } else {
    uint32_t mm, rem, ii, jj;
    lay.by_nn.divmod(e, mm, rem);
    lay.by_n.divmod(rem, ii, jj);
    m = int(mm), i = int(ii), j = int(jj);
  }
}

// Moves to the next element in row-major order.
template <int N = 0>
__device__ __forceinline__ void stage_advance(const StageLayout& lay, int& m, int& i, int& j) {
  const int n = N > 0 ? N : lay.n;
  if (++j == n) {
    j = 0;
    if (++i == n) {
      i = 0;
      ++m;
    }
  }
}

// Copies `total` elements (whole matrices) from global memory into the staged layout.
// With `vec`, g is 16-byte aligned and total is a multiple of 16 / sizeof(T): 16-byte
// loads, U in flight per thread before the first shared-memory store. U = 4 keeps the
// many-warp kernels of small n at 32 registers; the one-warp blocks of warp64 stage a
// 16 KB matrix per warp and take 16 (two round trips to memory instead of eight).
// N: see stage_locate.
template <typename T, int U = 4, int N = 0>
__device__ __forceinline__ void stage_in(T* __restrict__ s, const T* __restrict__ g, int total,
                                         const StageLayout& lay, bool vec) {
  if (vec) {
    constexpr int V = 16 / sizeof(T);
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
          if constexpr (N > 0 && N % V == 0) {
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

// Copies the staged factors out, zeroing the triangle that is not the factor's.
template <typename T, int N = 0>
__device__ __forceinline__ void stage_out(T* __restrict__ g, const T* __restrict__ s, int total,
                                          const StageLayout& lay, bool vec, bool upper) {
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
          vals[w] = keep ? src[w] : T(0);
        }
      } else {
#pragma unroll
        for (int w = 0; w < V; ++w) {
          const bool keep = upper ? j >= i : j <= i;
          vals[w] = keep ? s[m * lay.ms + i * lay.pitch + j] : T(0);
          stage_advance<N>(lay, m, i, j);
        }
      }
      uint4 out;
      memcpy(&out, vals, sizeof(out));
      gv[v] = out;
    }
  } else {
    for (int e = threadIdx.x; e < total; e += blockDim.x) {
      int m, i, j;
      stage_locate<N>(lay, uint32_t(e), m, i, j);
      const bool keep = upper ? j >= i : j <= i;
      g[e] = keep ? s[m * lay.ms + i * lay.pitch + j] : T(0);
    }
  }
}

// Staging of a chunk whose matrices have order N (the kernel's padded order) exactly,
// with N as a constant (stage_locate), or of any order.
template <typename T, int U, int N>
__device__ __forceinline__ void stage_in_exact(T* __restrict__ s, const T* __restrict__ g,
                                               int total, const StageLayout& lay, bool vec) {
  if (lay.n == N) {
    stage_in<T, U, N>(s, g, total, lay, vec);
  } else {
    stage_in<T, U>(s, g, total, lay, vec);
  }
}

template <typename T, int N>
__device__ __forceinline__ void stage_out_exact(T* __restrict__ g, const T* __restrict__ s,
                                                int total, const StageLayout& lay, bool vec,
                                                bool upper) {
  if (lay.n == N) {
    stage_out<T, N>(g, s, total, lay, vec, upper);
  } else {
    stage_out<T>(g, s, total, lay, vec, upper);
  }
}

// The lane's rows of the lower working matrix from a staged matrix mat (rows of the
// staged A for lower, its columns for upper); rows past n (all rows when n_eff = 0)
// are the identity padding.
template <typename T, int NP, int P>
__device__ __forceinline__ void load_group_rows(T (&a)[GroupShape<NP, P>::kRows][NP],
                                                const T* mat, int pitch, int n_eff, int q,
                                                bool upper) {
  using S = GroupShape<NP, P>;
#pragma unroll
  for (int t = 0; t < S::kRows; ++t) {
    const int i = q + P * t;
#pragma unroll
    for (int j = 0; j < S::width(t); ++j) {
      T v = T(0);
      if (i < n_eff) {
        if (j <= i) v = upper ? mat[j * pitch + i] : mat[i * pitch + j];
      } else if (j == i) {
        v = T(1);
      }
      a[t][j] = v;
    }
  }
}

// Writes the lane's factor rows back where load_group_rows read them (j <= i only).
template <typename T, int NP, int P>
__device__ __forceinline__ void store_group_rows(const T (&a)[GroupShape<NP, P>::kRows][NP],
                                                 T* mat, int pitch, int n_eff, int q,
                                                 bool upper) {
  using S = GroupShape<NP, P>;
#pragma unroll
  for (int t = 0; t < S::kRows; ++t) {
    const int i = q + P * t;
    if (i < n_eff) {
#pragma unroll
      for (int j = 0; j < S::width(t); ++j)
        if (j <= i) (upper ? mat[j * pitch + i] : mat[i * pitch + j]) = a[t][j];
    }
  }
}

// The lane's columns of the staged factor: col[t][j] = L(j, q + P t) for j >= P t.
template <typename T, int NP, int P>
__device__ __forceinline__ void load_group_cols(T (&col)[GroupShape<NP, P>::kRows][NP],
                                                const T* mat, int pitch, int n_eff, int q,
                                                bool upper) {
  using S = GroupShape<NP, P>;
#pragma unroll
  for (int t = 0; t < S::kRows; ++t) {
    const int i = q + P * t;
#pragma unroll
    for (int j = P * t; j < NP; ++j) {
      T v = T(0);
      if (i < n_eff) {
        if (j >= i && j < n_eff) v = upper ? mat[i * pitch + j] : mat[j * pitch + i];
      } else if (j == i) {
        v = T(1);
      }
      col[t][j] = v;
    }
  }
}

// Factors the staged matrix `mat` (order n_eff, identity-padded to NP; n_eff = 0: an
// identity) in place on the P lanes of its group, q being the lane's index in it: the
// factor's triangle is written back, the other one is left as it was. Returns the info
// (the same on every lane of the group) and leaves the reciprocals of the factor's
// diagonal in rdiag.
template <typename T, int NP, int P>
__device__ __forceinline__ int group_factor_staged(T* mat, int pitch, int n_eff, int q, bool upper,
                                                   real_t<T> (&rdiag)[GroupShape<NP, P>::kRows]) {
  T a[GroupShape<NP, P>::kRows][NP];
  load_group_rows<T, NP, P>(a, mat, pitch, n_eff, q, upper);
  const int inf = group_potrf<T, NP, P>(a, rdiag, q);
  store_group_rows<T, NP, P>(a, mat, pitch, n_eff, q, upper);
  return inf;
}

// Matrices (groups of P lanes) per block and the staged chunk's first matrix and size.
template <int P>
__device__ __forceinline__ void chunk_of_block(int64_t batch, int64_t& first, int& count) {
  const int per_block = blockDim.x / P;
  first = int64_t(blockIdx.x) * per_block;
  count = int(batch - first < per_block ? batch - first : per_block);
}

template <typename T, int NP, int P>
__global__ void __launch_bounds__(256)
    potrf_warp_kernel(const T* __restrict__ A, T* __restrict__ L, int* __restrict__ info,
                      int64_t batch, StageLayout lay, bool upper, bool vec) {
  using S = GroupShape<NP, P>;
  extern __shared__ __align__(16) unsigned char warp_smem_raw[];
  T* s = reinterpret_cast<T*>(warp_smem_raw);
  int64_t first;
  int count;
  chunk_of_block<P>(batch, first, count);
  const int nn = lay.n * lay.n;
  stage_in_exact<T, 4, NP>(s, A + first * nn, count * nn, lay, vec);
  __syncthreads();

  const int g = threadIdx.x / P, q = threadIdx.x % P;
  const int n_eff = g < count ? lay.n : 0;  // groups past the batch factor an identity
  real_t<T> rdiag[S::kRows];
  const int inf = group_factor_staged<T, NP, P>(s + g * lay.ms, lay.pitch, n_eff, q, upper, rdiag);
  if (n_eff > 0 && q == 0) info[first + g] = inf;
  __syncthreads();
  stage_out_exact<T, NP>(L + first * nn, s, count * nn, lay, vec, upper);
}

// Factor and solve: B, X are [batch, n, k]. Upper factors solve L' L'^H conj(x) =
// conj(b) with L' the lower factor of A^T (posv_kernels.cuh). L may be null: then the
// factor stays on chip (the solve-only entry point writes X and info alone).
template <typename T, int NP, int P, int kMinBlocks = 1>
__global__ void __launch_bounds__(256, kMinBlocks)
    posv_warp_kernel(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ X,
                     T* __restrict__ L, int* __restrict__ info, int64_t batch, int k,
                     StageLayout lay, bool upper, bool vec) {
  using S = GroupShape<NP, P>;
  extern __shared__ __align__(16) unsigned char warp_smem_raw[];
  T* s = reinterpret_cast<T*>(warp_smem_raw);
  int64_t first;
  int count;
  chunk_of_block<P>(batch, first, count);
  const int n = lay.n, nn = n * n;
  stage_in_exact<T, 4, NP>(s, A + first * nn, count * nn, lay, vec);
  __syncthreads();

  const int g = threadIdx.x / P, q = threadIdx.x % P;
  const int n_eff = g < count ? n : 0;
  const bool conj_rhs = upper && IsComplex<T>::value;
  T* mat = s + g * lay.ms;
  real_t<T> rdiag[S::kRows];
  const int inf = group_factor_staged<T, NP, P>(mat, lay.pitch, n_eff, q, upper, rdiag);
  if (n_eff > 0 && q == 0) info[first + g] = inf;
  __syncwarp();  // a group's lanes share one warp: its factor is now visible to them

  const int64_t sys = (first + g) * int64_t(n) * k;
  for (int c = 0; c < k; ++c) {
    T b[S::kRows];
#pragma unroll
    for (int t = 0; t < S::kRows; ++t) {
      const int i = q + P * t;
      b[t] = i < n_eff ? B[sys + int64_t(i) * k + c] : T(0);
      if (conj_rhs) b[t] = conj_(b[t]);
    }
    // Rows and columns are re-read per column so that only one of them is live.
    T a[S::kRows][NP];
    load_group_rows<T, NP, P>(a, mat, lay.pitch, n_eff, q, upper);
    group_forward<T, NP, P>(a, rdiag, b, q);
    T col[S::kRows][NP];
    load_group_cols<T, NP, P>(col, mat, lay.pitch, n_eff, q, upper);
    group_backward<T, NP, P>(col, rdiag, b, q);
#pragma unroll
    for (int t = 0; t < S::kRows; ++t) {
      const int i = q + P * t;
      if (i < n_eff) X[sys + int64_t(i) * k + c] = conj_rhs ? conj_(b[t]) : b[t];
    }
  }
  if (L == nullptr) return;
  __syncthreads();
  stage_out_exact<T, NP>(L + first * nn, s, count * nn, lay, vec, upper);
}

}  // namespace cuda
}  // namespace batchchol
