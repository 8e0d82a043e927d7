// Staging copies of the register families (warp, warp64; the wide family shares the
// layouts and keeps copies of its own, wide_stage.cuh): a thread block moves a
// contiguous chunk of the batch between global memory (row-major n x n matrices) and
// shared memory with 16-byte coalesced copies, and its lanes then read the rows of the
// lower working matrix W (W = A for a lower factor, A^T for an upper one) from there.
//
// Two shared-memory layouts:
// - square (StageLayout from make_stage_layout): matrix m at m * ms, row i at i * pitch,
//   pitch odd and ms = P * pitch (mod 32). Lane l = P g + q of a warp reading row q + P t
//   of its matrix g then touches address l * pitch + const (mod 32): one bank per lane,
//   and the transposed read (upper) touches P (g * pitch mod 32/P) + q: also one bank
//   per lane. The same holds per half warp for 8-byte elements. A is stored as it is;
//   W(i, j) is at RowIndex (lower) or ColumnIndex (upper).
// - packed (make_packed_stage_layout): only W's lower triangle, row by row, W(i, j) at
//   lo_row(i) + j (PackedIndex, packed_triangle.cuh), half the shared memory. The
//   triangular numbers of rows 16 t .. 16 t + 15 are distinct mod 16 and those of rows
//   32 t .. 32 t + 31 mod 32, so the 8-byte reads of a half warp whose 16 lanes read one
//   matrix's rows q + 16 t (warp potrf, float64) and the 4-byte reads of a warp reading
//   rows q + 32 t (warp64, float32) are free of bank conflicts.
#pragma once

#include <cstdint>
#include <cstring>

#include "cuda/fast_div.cuh"
#include "cuda/packed_triangle.cuh"

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

inline StageLayout make_packed_stage_layout(int n) {
  StageLayout s = make_stage_layout<1>(n);
  s.pitch = 0;  // no rows of a fixed length
  s.ms = lo_row(n);
  return s;
}

// Where W(i, j), j <= i, lives in a staged matrix: the square layout's rows (lower) or
// columns (upper), or the packed triangle.
struct RowIndex {
  int pitch;
  __device__ __forceinline__ int operator()(int i, int j) const { return i * pitch + j; }
};

struct ColumnIndex {
  int pitch;
  __device__ __forceinline__ int operator()(int i, int j) const { return j * pitch + i; }
};

struct PackedIndex {
  __device__ __forceinline__ int operator()(int i, int j) const { return lo_row(i) + j; }
};

// Calls f with the square layout's index of W: ColumnIndex for an upper factor (A's
// columns), RowIndex for a lower one. One loop per layout instead of an index that
// selects per entry, which cost the fused posv float32 NP = 32 25 more registers
// (128 -> 153).
template <typename F>
__device__ __forceinline__ void with_square_index(int pitch, bool upper, F&& f) {
  if (upper) {
    f(ColumnIndex{pitch});
  } else {
    f(RowIndex{pitch});
  }
}

// A reference to W(i, j) in a staged matrix, for routines that write the entries of L
// as they produce them (warp64_chol.cuh): the square layout (A as stored: rows for
// lower, columns for upper) or the packed one.
struct SquareAccess {
  int pitch;
  bool upper;
  template <typename T>
  __device__ __forceinline__ T& operator()(T* mat, int i, int j) const {
    return upper ? mat[j * pitch + i] : mat[i * pitch + j];
  }
};

struct PackedAccess {
  template <typename T>
  __device__ __forceinline__ T& operator()(T* mat, int i, int j) const {
    return mat[lo_row(i) + j];
  }
};

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

// Whether the V elements from (i, j) on, within one row, touch A's part of W's lower
// triangle (lower: j <= i; upper: j >= i).
template <int V>
__device__ __forceinline__ bool stage_vec_needed(int i, int j, bool upper) {
  return upper ? j + V - 1 >= i : j <= i;
}

// A chunk's elements [0, total) at g, split at g's 16-byte boundaries: `head` elements
// before the first boundary, then `nvec` whole 16-byte vectors, then the tail (fewer
// than V elements); the head and the tail (the "edges") move element by element. At
// odd orders n^2 is odd (1 mod V), so a chunk starting at matrix `first` is V-aligned
// only when `first` is: the other chunks had copied every element alone. H200, the
// issue's 256 MB batches, element / split copies, same bits, one build
// (results/h200-2026-11-28-round46-odd-staging-ab.txt): potrf float32 n = 5 0.219 ->
// 0.176 ms, 25 0.426 -> 0.263, 33 0.668 -> 0.530, 63 0.463 -> 0.336; float64 7 0.216
// -> 0.188, 31 0.318 -> 0.260, 45 0.469 -> 0.384; posv_solve (100,000 systems) float32
// 31 0.418 -> 0.290, float64 31 0.625 -> 0.539.
template <typename T>
struct AlignedSplit {
  static constexpr int V = 16 / sizeof(T);
  int head, nvec, edges;
  __device__ __forceinline__ AlignedSplit(const T* g, int total) {
    const uint32_t to_boundary = (16u - uint32_t(reinterpret_cast<uintptr_t>(g) & 15u)) & 15u;
    head = min(int(to_boundary / sizeof(T)), total);
    nvec = (total - head) / V;
    edges = total - nvec * V;
  }
  // The chunk index of edge x (0 <= x < edges).
  __device__ __forceinline__ int edge(int x) const { return x < head ? x : x + nvec * V; }
};

// Copies `total` elements (whole matrices) from global memory into the square layout
// with 16-byte loads, U in flight per thread before the first shared-memory store. U = 4
// keeps the many-warp kernels of small n at 32 registers; the one-warp blocks of warp64
// stage a 16 KB matrix per warp and take 16 (two round trips to memory instead of
// eight). With `vec` (g 16-byte aligned, total a multiple of V) and N % V == 0 a vector
// never crosses a row and goes to the stage whole; otherwise the chunk is split
// (AlignedSplit) and each vector's elements are placed one by one.
// N: see stage_locate.
//
// kTri: when a 16-byte vector never crosses a row (N % V == 0), the vectors wholly
// outside the working triangle are neither loaded nor stored (only the triangle is ever
// read from the stage). A row of order 32 needs 1..8 of its 8 sectors: ~44% fewer
// bytes read in float64. H100, 2026-11-24 (results/h100-2026-11-24-stage-tri-ab.txt,
// one build, a run-time switch): potrf of the warp family float64 n = 16 / 32 6%
// faster, float32 n = 32 3%; but warp64 (float32 n = 64) 3%, wide (float64 n = 64) 4%
// and the fused posv kernels 1-5% slower with the same skipping into the square stage,
// so those copy everything. (The packed stages below skip them too: there the
// occupancy they win outweighs it.)
template <typename T, int U = 4, int N = 0, bool kTri = false>
__device__ __forceinline__ void stage_in(T* __restrict__ s, const T* __restrict__ g, int total,
                                         const StageLayout& lay, bool vec, bool upper) {
  constexpr int V = 16 / sizeof(T);
  constexpr bool kRows = N > 0 && N % V == 0;
  if (kRows && vec) {
    const int nvec = total / V;
    const uint4* gv = reinterpret_cast<const uint4*>(g);
    for (int v0 = threadIdx.x; v0 < nvec; v0 += U * blockDim.x) {
      uint4 buf[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int v = v0 + u * blockDim.x;
        bool load = v < nvec;
        if constexpr (kTri) {
          int m, i, j;
          stage_locate<N>(lay, uint32_t(v * V), m, i, j);
          load = load && stage_vec_needed<V>(i, j, upper);
        }
        if (load) buf[u] = __ldg(gv + v);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int v = v0 + u * blockDim.x;
        if (v < nvec) {
          int m, i, j;
          stage_locate<N>(lay, uint32_t(v * V), m, i, j);
          if (kTri && !stage_vec_needed<V>(i, j, upper)) continue;
          T vals[V];
          memcpy(vals, &buf[u], sizeof(vals));
          T* dst = s + m * lay.ms + i * lay.pitch + j;
#pragma unroll
          for (int w = 0; w < V; ++w) dst[w] = vals[w];
        }
      }
    }
    return;
  }
  // Any order and alignment: 16-byte loads of the chunk's aligned middle, each vector's
  // elements placed one by one (a vector may cross rows and matrices).
  const AlignedSplit<T> sp(g, total);
  for (int x = threadIdx.x; x < sp.edges; x += blockDim.x) {
    const int e = sp.edge(x);
    int m, i, j;
    stage_locate<N>(lay, uint32_t(e), m, i, j);
    s[m * lay.ms + i * lay.pitch + j] = g[e];
  }
  const uint4* gv = reinterpret_cast<const uint4*>(g + sp.head);
  for (int v0 = threadIdx.x; v0 < sp.nvec; v0 += U * blockDim.x) {
    uint4 buf[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int v = v0 + u * blockDim.x;
      if (v < sp.nvec) buf[u] = __ldg(gv + v);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int v = v0 + u * blockDim.x;
      if (v < sp.nvec) {
        T vals[V];
        memcpy(vals, &buf[u], sizeof(vals));
        int m, i, j;
        stage_locate<N>(lay, uint32_t(sp.head + v * V), m, i, j);
#pragma unroll
        for (int w = 0; w < V; ++w) {
          s[m * lay.ms + i * lay.pitch + j] = vals[w];
          stage_advance<N>(lay, m, i, j);
        }
      }
    }
  }
}

// The staged entry (i, j) of the factor as it is copied out: as staged.
struct StagedAsIs {
  template <typename T>
  __device__ __forceinline__ T operator()(int, int, T v) const {
    return v;
  }
};

// Copies the staged factors out, zeroing the triangle that is not the factor's; each kept
// entry (i, j) of the output goes through out(i, j, v) (a family whose stage holds
// unscaled entries forms the factor here: wide_copy_out.cuh). 16-byte stores as
// stage_in's loads: whole rows' vectors or the split.
template <typename T, int N = 0, typename Out = StagedAsIs>
__device__ __forceinline__ void stage_out(T* __restrict__ g, const T* __restrict__ s, int total,
                                          const StageLayout& lay, bool vec, bool upper,
                                          Out out = {}) {
  constexpr int V = 16 / sizeof(T);
  if (N > 0 && N % V == 0 && vec) {
    const int nvec = total / V;
    uint4* gv = reinterpret_cast<uint4*>(g);
    for (int v = threadIdx.x; v < nvec; v += blockDim.x) {
      int m, i, j;
      stage_locate<N>(lay, uint32_t(v * V), m, i, j);
      const T* src = s + m * lay.ms + i * lay.pitch + j;
      T vals[V];
#pragma unroll
      for (int w = 0; w < V; ++w) {
        const bool keep = upper ? j + w >= i : j + w <= i;
        vals[w] = keep ? out(i, j + w, src[w]) : T(0);
      }
      uint4 packed;
      memcpy(&packed, vals, sizeof(packed));
      gv[v] = packed;
    }
    return;
  }
  const auto entry = [&](int m, int i, int j) {
    const bool keep = upper ? j >= i : j <= i;
    return keep ? out(i, j, s[m * lay.ms + i * lay.pitch + j]) : T(0);
  };
  // Any order and alignment, as in stage_in: 16-byte stores of the aligned middle.
  const AlignedSplit<T> sp(g, total);
  for (int x = threadIdx.x; x < sp.edges; x += blockDim.x) {
    const int e = sp.edge(x);
    int m, i, j;
    stage_locate<N>(lay, uint32_t(e), m, i, j);
    g[e] = entry(m, i, j);
  }
  uint4* gv = reinterpret_cast<uint4*>(g + sp.head);
  for (int v = threadIdx.x; v < sp.nvec; v += blockDim.x) {
    int m, i, j;
    stage_locate<N>(lay, uint32_t(sp.head + v * V), m, i, j);
    T vals[V];
#pragma unroll
    for (int w = 0; w < V; ++w) {
      vals[w] = entry(m, i, j);
      stage_advance<N>(lay, m, i, j);
    }
    uint4 packed;
    memcpy(&packed, vals, sizeof(packed));
    gv[v] = packed;
  }
}

// Staging of a chunk whose matrices have order N (the kernel's padded order) exactly,
// with N as a constant (stage_locate), or of any order.
template <typename T, int U, int N, bool kTri = false>
__device__ __forceinline__ void stage_in_exact(T* __restrict__ s, const T* __restrict__ g,
                                               int total, const StageLayout& lay, bool vec,
                                               bool upper) {
  if (lay.n == N) {
    stage_in<T, U, N, kTri>(s, g, total, lay, vec, upper);
  } else {
    stage_in<T, U>(s, g, total, lay, vec, upper);
  }
}

template <typename T, int N, typename Out = StagedAsIs>
__device__ __forceinline__ void stage_out_exact(T* __restrict__ g, const T* __restrict__ s,
                                                int total, const StageLayout& lay, bool vec,
                                                bool upper, Out out = {}) {
  if (lay.n == N) {
    stage_out<T, N>(g, s, total, lay, vec, upper, out);
  } else {
    stage_out<T>(g, s, total, lay, vec, upper, out);
  }
}

// The packed layout: W's lower triangle only; an upper factor's entry A(i, j), j >= i,
// goes to W(j, i). 16-byte copies only (stage_in's vec; element copies into the packed
// layout were 16-27% slower than the square stage at odd n, float64, H100), N as in
// stage_in: with N % V == 0 only the vectors that touch the triangle are loaded (a
// vector never crosses a row); other orders load every vector and place its elements
// one by one.
template <typename T>
__device__ __forceinline__ void stage_put_packed(T* mat, int i, int j, bool upper, T v) {
  const PackedIndex at;
  if (upper ? j >= i : j <= i) mat[upper ? at(j, i) : at(i, j)] = v;
}

template <typename T>
__device__ __forceinline__ T stage_get_packed(const T* mat, int i, int j, bool upper) {
  const PackedIndex at;
  return (upper ? j >= i : j <= i) ? mat[upper ? at(j, i) : at(i, j)] : T(0);
}

template <typename T, int U, int N = 0>
__device__ __forceinline__ void stage_in_packed(T* __restrict__ s, const T* __restrict__ g,
                                                int total, const StageLayout& lay, bool upper) {
  constexpr int V = 16 / sizeof(T);
  constexpr bool kRows = N > 0 && N % V == 0;
  const int nvec = total / V;
  const uint4* gv = reinterpret_cast<const uint4*>(g);
  for (int v0 = threadIdx.x; v0 < nvec; v0 += U * blockDim.x) {
    uint4 buf[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int v = v0 + u * blockDim.x;
      bool load = v < nvec;
      if constexpr (kRows) {
        int m, i, j;
        stage_locate<N>(lay, uint32_t(v * V), m, i, j);
        load = load && stage_vec_needed<V>(i, j, upper);
      }
      if (load) buf[u] = __ldg(gv + v);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int v = v0 + u * blockDim.x;
      if (v >= nvec) continue;
      int m, i, j;
      stage_locate<N>(lay, uint32_t(v * V), m, i, j);
      if (kRows && !stage_vec_needed<V>(i, j, upper)) continue;
      T vals[V];
      memcpy(vals, &buf[u], sizeof(vals));
#pragma unroll
      for (int w = 0; w < V; ++w) {
        if constexpr (kRows) {
          stage_put_packed(s + m * lay.ms, i, j + w, upper, vals[w]);
        } else {
          stage_put_packed(s + m * lay.ms, i, j, upper, vals[w]);
          stage_advance<N>(lay, m, i, j);
        }
      }
    }
  }
}

// Writes the packed factors out as whole n x n matrices (the other triangle zero).
template <typename T, int N = 0>
__device__ __forceinline__ void stage_out_packed(T* __restrict__ g, const T* __restrict__ s,
                                                 int total, const StageLayout& lay, bool upper) {
  constexpr int V = 16 / sizeof(T);
  constexpr bool kRows = N > 0 && N % V == 0;
  const int nvec = total / V;
  uint4* gv = reinterpret_cast<uint4*>(g);
  for (int v = threadIdx.x; v < nvec; v += blockDim.x) {
    int m, i, j;
    stage_locate<N>(lay, uint32_t(v * V), m, i, j);
    T vals[V];
#pragma unroll
    for (int w = 0; w < V; ++w) {
      if constexpr (kRows) {
        vals[w] = stage_get_packed(s + m * lay.ms, i, j + w, upper);
      } else {
        vals[w] = stage_get_packed(s + m * lay.ms, i, j, upper);
        stage_advance<N>(lay, m, i, j);
      }
    }
    uint4 out;
    memcpy(&out, vals, sizeof(out));
    gv[v] = out;
  }
}

// The packed copies with the order as a constant when it is N.
template <typename T, int U, int N>
__device__ __forceinline__ void stage_in_packed_exact(T* __restrict__ s, const T* __restrict__ g,
                                                      int total, const StageLayout& lay,
                                                      bool upper) {
  if (lay.n == N) {
    stage_in_packed<T, U, N>(s, g, total, lay, upper);
  } else {
    stage_in_packed<T, U>(s, g, total, lay, upper);
  }
}

template <typename T, int N>
__device__ __forceinline__ void stage_out_packed_exact(T* __restrict__ g, const T* __restrict__ s,
                                                       int total, const StageLayout& lay,
                                                       bool upper) {
  if (lay.n == N) {
    stage_out_packed<T, N>(g, s, total, lay, upper);
  } else {
    stage_out_packed<T>(g, s, total, lay, upper);
  }
}

}  // namespace cuda
}  // namespace batchchol
