// potrf with the whole lower triangle of one matrix in shared memory, as 32 x 32 tiles
// (the "tile" family): right-looking over tile columns, the trailing update as warp-level
// 32 x 32 x 32 products from shared memory.
//
// Why: from n of about 100 the one-row-per-lane families run out of registers, and the
// multi-launch blocked family streams the trailing matrix through memory once per panel
// (float64 n = 128: 0.15 of the roofline). Packing only the tiles on and below the
// diagonal halves the stage (float64 n = 128: 80 KB, two matrices per SM; float32
// n = 256: 144 KB), and tiles above the diagonal are never read from memory.
//
// Tile layout: row-major 32 x 32, each row cut into 16-byte chunks, chunk q of row r
// stored at position q ^ (r & 7). The update reads 16-byte chunks of eight rows that
// differ in r & 7 at once; the swizzle puts them in distinct banks.
#pragma once

#include "cuda/async_copy.cuh"
#include "cuda/dmma.cuh"
#include "cuda/potrf_block.cuh"
#include "cuda/potrf_device.cuh"

#include <type_traits>

namespace batchchol {
namespace cuda {

constexpr int kTile = 32;
constexpr int kTileElems = kTile * kTile;

template <typename T>
struct TileChunk;
template <>
struct TileChunk<float> {
  using type = float4;
  static constexpr int kLen = 4;
  __device__ static float get(const float4& v, int u) {
    return u == 0 ? v.x : u == 1 ? v.y : u == 2 ? v.z : v.w;
  }
};
template <>
struct TileChunk<double> {
  using type = double2;
  static constexpr int kLen = 2;
  __device__ static double get(const double2& v, int u) { return u == 0 ? v.x : v.y; }
};

// Tiles of the packed lower triangle of an nt x nt tile grid.
__host__ __device__ constexpr int tile_count(int nt) { return nt * (nt + 1) / 2; }

// Offset of element (r, c) inside a tile.
template <typename T>
__device__ __forceinline__ int tile_off(int r, int c) {
  constexpr int V = TileChunk<T>::kLen;
  return r * kTile + (((c / V) ^ (r & 7)) * V) + c % V;
}

// Tile (I, J), I >= J, of the packed triangle (const or not).
template <typename P>
__device__ __forceinline__ P* tile_at(P* s, int I, int J) {
  return s + (I * (I + 1) / 2 + J) * kTileElems;
}

// The packed stage (tile_packed.cuh) holds the triangle less its last diagonal tile
// from three tile columns on (nt >= 3: tile (0, 0)'s slot is free before that tile is
// first updated; the same test in tile_home, tile_update_trailing and tile_potrf_packed,
// spelled out there: a shared constexpr helper changed the timed kernels' SASS), which
// lives in tile (0, 0)'s slot from step 1's panel phase on.
__host__ __device__ constexpr int tile_packed_slots(int nt) {
  return tile_count(nt) - (nt >= 3 ? 1 : 0);
}

// Where tile (I, J), I >= J, lives in the packed stage.
template <typename P>
__device__ __forceinline__ P* tile_home(P* s, int nt, int I, int J) {
  return I == J && I == nt - 1 && nt >= 3 ? s : tile_at(s, I, J);
}

// Chunk q of row r of a tile, in place (const or not).
template <typename P>
__device__ __forceinline__ auto tile_chunk_ref(P* t, int r, int q) -> decltype(auto) {
  using T = std::remove_const_t<P>;
  using C = std::conditional_t<std::is_const_v<P>, const typename TileChunk<T>::type,
                               typename TileChunk<T>::type>;
  return *reinterpret_cast<C*>(t + r * kTile + ((q ^ (r & 7)) * TileChunk<T>::kLen));
}

template <typename T>
__device__ __forceinline__ typename TileChunk<T>::type tile_chunk(const T* t, int r, int q) {
  return tile_chunk_ref(t, r, q);
}

// The pivot chain's column buffers (potrf_rows_chain): three columns of 32.
constexpr int kChainBuf = 3 * kTile;

// Factors the 32 x 32 lower matrix whose rows one warp holds (lane r: row r in a[],
// zeros past the diagonal; real types) and returns its info (1-based, 0 when it
// factored); afterwards a[j] = L(r, j) for j <= r (entries past the diagonal are
// scratch) and rdiag = 1 / L(r, r). `cb` is kChainBuf elements of the warp's shared
// memory, 16-byte aligned.
//
// This factorization is the serial chain of the tile family (one warp, while the block's
// other warps wait) and of the blocked family's diagonal kernel, so each step keeps only
// what the next pivot needs on its path: the raw column k + 1 is published to `cb` as
// soon as entry k + 1 has step k's update (one __syncwarp per step), and the rest of
// step k's updates run after that __syncwarp, beside the next pivot's loads and
// reciprocal square root. (Before, step k's 31 - k multiply-adds issued ahead of the
// __syncwarp, in order, on the chain: the pivot's latency and the bulk added up; the
// phase probe, tools/tile_phase_probe.cu, put the diagonal tiles at ~45% of a tile
// block's time for float64 n = 128.) Three buffers, by k % 3: a lane may still read
// column k after the __syncwarp of step k + 1 while another lane publishes column k + 2.
// The rows are updated with a_rk / d_k = (a_rk rsqrt_(d_k)) rsqrt_(d_k) (no division
// with its slow-path branch on the chain: float64 n = 80..128 8-25% faster, float32
// 200..256 7-13%; results/h100-2026-11-25-rsqrt-pivot-ab.txt). The square roots and the
// scaling L(r, k) = a_rk / sqrt(d_k) wait until after the last step: inside the loop
// their long sequences and slow-path branches sat between one pivot and the next. The
// scaling multiplies by the reciprocal of sqrt(d_k), as xPOTF2 does. Every entry sees
// the same operations in the same order as in the unpipelined chain (the same bits).
template <typename T>
__device__ __forceinline__ int potrf_rows_chain(T (&a)[kTile], T* cb, T& rdiag) {
  using Chunk = TileChunk<T>;
  constexpr int V = Chunk::kLen;
  const int lane = threadIdx.x & 31;
  const auto column = [&](int k) { return cb + (k % 3) * kTile; };
  int info = 0;
  T d_own = T(1);  // d_r, the pivot of this lane's row
  T f = T(0);      // a_rk / d_k for the current step k
  T next = T(0);   // column k's entry in row k + 1
  // Pivot k from column k once published: the info, and the entry the next pivot's
  // update needs first; returns d_k.
  const auto load_pivot = [&](int k) {
    const T* c = column(k);
    const T dk = c[k];
    if (!pivot_ok(dk) && info == 0) info = k + 1;
    if (lane == k) d_own = dk;
    if (k + 1 < kTile) next = c[k + 1];
    return dk;
  };
  const auto factor = [&](int k, T dk) {
    const T inv = rsqrt_(dk);
    return (a[k] * inv) * inv;  // inv * inv overflows for subnormal d_k
  };
  column(0)[lane] = a[0];
  __syncwarp();
  f = factor(0, load_pivot(0));
#pragma unroll
  for (int k = 0; k + 1 < kTile; ++k) {
    a[k + 1] -= f * next;
    column(k + 1)[lane] = a[k + 1];
    __syncwarp();
    const T d_next = load_pivot(k + 1);
    // The rest of step k, ahead of the reciprocal square root: float64's rsqrt branches
    // to a slow path for zero, negative, subnormal, infinite and NaN arguments, and the
    // branch ends the scheduler's block; placed before it, the multiply-adds fill the
    // latency of the pivot's load and of its square root.
    const T* c = column(k);
#pragma unroll
    for (int q = (k + 2) / V; q < kTile / V; ++q) {
      const auto ch = *reinterpret_cast<const typename Chunk::type*>(c + q * V);
#pragma unroll
      for (int u = 0; u < V; ++u)
        if (q * V + u > k + 1) a[q * V + u] -= f * Chunk::get(ch, u);
    }
    f = factor(k + 1, d_next);
  }
  // Column 29's buffer was last read (by the rest of step 29) before the __syncwarp that
  // published column 31; column 31's own buffer is read by its pivot's load after it.
  const T s_own = sqrt(d_own);
  rdiag = T(1) / s_own;
  T* r = column(kTile - 3);
  r[lane] = rdiag;
  __syncwarp();
#pragma unroll
  for (int q = 0; q < kTile / V; ++q) {
    const auto ch = *reinterpret_cast<const typename Chunk::type*>(r + q * V);
#pragma unroll
    for (int u = 0; u < V; ++u) {
      const int j = q * V + u;
      a[j] = j == lane ? s_own : a[j] * Chunk::get(ch, u);
    }
  }
  return info;
}

// The chain's buffer column that holds 1 / L(j, j) after potrf_rows_chain (its last
// publication, `column(kTile - 3)` there: keep the two in step).
constexpr int kChainRdiag = ((kTile - 3) % 3) * kTile;

// Factors diagonal tile d with one warp (potrf_rows_chain) and leaves in `col` what the
// panel solve reads: col[j * 32 + p] = L(p, j) for p > j, and col[j * 33] = 1 / L(j, j),
// so that a column of L is a run of broadcast chunks. kPacked (tile_packed.cuh; col
// unused): L^T in d's upper part instead (d(j, p) = L(p, j), p > j; scratch until then,
// and no update touches a factored diagonal tile), 1 / L(j, j) at cb[kChainRdiag + j].
// Returns the tile's info.
template <bool kPacked = false, typename T>
__device__ __forceinline__ int tile_factor_diag(T* d, T* col, T* cb) {
  using Chunk = TileChunk<T>;
  constexpr int V = Chunk::kLen;
  const int lane = threadIdx.x & 31;
  T a[kTile];
#pragma unroll
  for (int q = 0; q < kTile / V; ++q) {
    const auto ch = tile_chunk(d, lane, q);
#pragma unroll
    for (int u = 0; u < V; ++u) a[q * V + u] = q * V + u <= lane ? Chunk::get(ch, u) : T(0);
  }
  T rdiag;
  const int info = potrf_rows_chain(a, cb, rdiag);
  // (Every lane's reads of d came before the chain's first __syncwarp.)
#pragma unroll
  for (int j = 0; j < kTile; ++j) {
    if (j <= lane) d[tile_off<T>(lane, j)] = a[j];
    if (j < lane) {
      if constexpr (kPacked) {
        d[tile_off<T>(j, lane)] = a[j];
      } else {
        col[j * kTile + lane] = a[j];
      }
    }
  }
  if constexpr (!kPacked) col[lane * (kTile + 1)] = rdiag;
  return info;
}

// Rows of the tiles below diagonal tile k: x L_kk^T = a, one row per thread, in column
// order (x_j final, then subtracted from the entries after it), which leaves 31
// independent update chains instead of one dot product per entry. L_kk as
// tile_factor_diag<kPacked> leaves it: in col, or (kPacked) in diagonal tile k and cb.
template <bool kPacked = false, typename T>
__device__ __forceinline__ void tile_solve_panel(T* s, int nt, int k, const T* col,
                                                 const T* cb = nullptr) {
  using Chunk = TileChunk<T>;
  constexpr int V = Chunk::kLen;
  const int rows = kTile * (nt - 1 - k);
  const T* d = kPacked ? tile_at(s, k, k) : col;
  for (int R = threadIdx.x; R < rows; R += blockDim.x) {
    T* t = tile_at(s, k + 1 + R / kTile, k);
    const int r = R % kTile;
    T x[kTile];
#pragma unroll
    for (int q = 0; q < kTile / V; ++q) {
      const auto ch = tile_chunk(t, r, q);
#pragma unroll
      for (int u = 0; u < V; ++u) x[q * V + u] = Chunk::get(ch, u);
    }
#pragma unroll
    for (int j = 0; j < kTile; ++j) {
      x[j] *= kPacked ? cb[kChainRdiag + j] : col[j * (kTile + 1)];
#pragma unroll
      for (int q = (j + 1) / V; q < kTile / V; ++q) {
        using C = typename Chunk::type;
        const auto ch = kPacked ? tile_chunk(d, j, q)
                                : *reinterpret_cast<const C*>(col + j * kTile + q * V);
#pragma unroll
        for (int u = 0; u < V; ++u)
          if (q * V + u > j) x[q * V + u] -= x[j] * Chunk::get(ch, u);
      }
    }
#pragma unroll
    for (int q = 0; q < kTile / V; ++q) {
      typename Chunk::type ch;
      T* p = reinterpret_cast<T*>(&ch);
#pragma unroll
      for (int u = 0; u < V; ++u) p[u] = x[q * V + u];
      tile_chunk_ref(t, r, q) = ch;
    }
  }
}

// C -= A B^T for three tiles, by one warp. Lane (ri, ci) = (lane % 8, lane / 8) owns rows
// ri + 8 a (a < 4) and columns ci + 4 b (b < 8): the chunks of A it reads sit in rows
// with distinct r & 7 across the warp (no bank conflict), those of B are broadcasts.
template <typename T>
__device__ __forceinline__ void tile_gemm_nt(T* c, const T* a, const T* b) {
  using Chunk = TileChunk<T>;
  constexpr int V = Chunk::kLen;
  const int lane = threadIdx.x & 31;
  const int ri = lane & 7, ci = lane >> 3;
  T acc[4][8];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = T(0);
#pragma unroll 1
  for (int q = 0; q < kTile / V; ++q) {
    typename Chunk::type av[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) av[i] = tile_chunk(a, ri + 8 * i, q);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const auto bv = tile_chunk(b, ci + 4 * j, q);
#pragma unroll
      for (int u = 0; u < V; ++u)
#pragma unroll
        for (int i = 0; i < 4; ++i) acc[i][j] += Chunk::get(av[i], u) * Chunk::get(bv, u);
    }
  }
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) c[tile_off<T>(ri + 8 * i, ci + 4 * j)] -= acc[i][j];
}

// C -= A B^T for three float64 tiles, by one warp on the MMAs (dmma.cuh): a 4 x 4 grid
// of 8 x 8 accumulators, 128 MMAs where tile_gemm_nt issues 1,024 multiply-adds a lane.
// Lane l reads fragment entries (8 m + l / 4, k + l % 4) of A and B: eight rows with
// distinct r & 7 and two chunks each, so a fragment read is two conflict-free 128-byte
// wavefronts in the swizzled layout, and an accumulator's 8 x 2 entries per lane
// group are chunks in distinct bank groups. kDiag (a diagonal tile): the six 8 x 8
// blocks above the diagonal are skipped (the tile's upper part is never read). (Not
// dmma_tiles_k32, update_dmma.cuh: its operands sit at a fixed pitch, while here a
// fragment's column offset is an XOR with the row at every k step.)
template <bool kDiag>
__device__ __forceinline__ void tile_gemm_nt_dmma(double* c, const double* a, const double* b) {
  const int lane = threadIdx.x & 31;
  const int r = lane / 4, kq = lane % 4;
  double acc[4][4][2];
#pragma unroll
  for (int m = 0; m < 4; ++m)
#pragma unroll
    for (int j = 0; j < 4; ++j) acc[m][j][0] = acc[m][j][1] = 0.0;
  // Row 8 m + r, column k + kq sits at (8 m + r) 32 + tile_off's swizzled column, and
  // the swizzle depends on the row through r only.
  const double* ar = a + r * kTile;
  const double* br = b + r * kTile;
#pragma unroll
  for (int k = 0; k < kTile; k += 4) {
    const int off = (((k + kq) / 2) ^ r) * 2 + (kq & 1);
    double af[4], bf[4];
#pragma unroll
    for (int m = 0; m < 4; ++m) af[m] = ar[8 * m * kTile + off];
#pragma unroll
    for (int j = 0; j < 4; ++j) bf[j] = br[8 * j * kTile + off];
#pragma unroll
    for (int m = 0; m < 4; ++m)
#pragma unroll
      for (int j = 0; j < 4; ++j)
        if (!kDiag || j <= m) dmma_m8n8k4(acc[m][j], af[m], bf[j]);
  }
#pragma unroll
  for (int m = 0; m < 4; ++m)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      if (kDiag && j > m) continue;
      double2& ch = tile_chunk_ref(c, 8 * m + r, 4 * j + kq);
      ch.x -= acc[m][j][0];
      ch.y -= acc[m][j][1];
    }
}

// Tile (I, J), J <= I, at c, minus L(I, k) L(J, k)^T, by one warp. A diagonal tile gets
// the full product (on the MMAs: the blocks on and below the diagonal); its upper part
// is scratch (never read, stored as 0). kMma: float64 on the MMAs (tile_gemm_nt_dmma).
template <typename T, bool kMma>
__device__ __forceinline__ void tile_update_at(T* c, const T* s, int I, int J, int k) {
  if constexpr (kMma) {
    static_assert(std::is_same_v<T, double>, "the MMA tile update is float64's");
    if (I == J) {
      tile_gemm_nt_dmma<true>(c, tile_at(s, I, k), tile_at(s, J, k));
    } else {
      tile_gemm_nt_dmma<false>(c, tile_at(s, I, k), tile_at(s, J, k));
    }
  } else {
    tile_gemm_nt(c, tile_at(s, I, k), tile_at(s, J, k));
  }
}

// The same with tile (I, J) where tile_at puts it.
template <typename T, bool kMma>
__device__ __forceinline__ void tile_update_one(T* s, int I, int J, int k) {
  tile_update_at<T, kMma>(tile_at(s, I, J), s, I, J, k);
}

// Trailing update after tile column k: every tile (I, J), k < J <= I, one tile per warp
// at a time. kPacked: tiles where tile_home puts them, and at step 0 not the deferred
// last diagonal tile (tri_index's last), which tile_packed.cuh's tile_last_finish
// updates at step 1.
template <typename T, bool kMma, bool kPacked = false>
__device__ __forceinline__ void tile_update_trailing(T* s, int nt, int k) {
  const int warp = threadIdx.x / 32, warps = blockDim.x / 32;
  const int m = nt - 1 - k;
  const int count = m * (m + 1) / 2 - (kPacked && k == 0 && nt >= 3 ? 1 : 0);
  for (int l = warp; l < count; l += warps) {
    int ti, tj;
    tri_index(l, ti, tj);
    if constexpr (kPacked) {
      const int I = k + 1 + ti, J = k + 1 + tj;
      tile_update_at<T, kMma>(tile_home(s, nt, I, J), s, I, J, k);
    } else {
      tile_update_one<T, kMma>(s, k + 1 + ti, k + 1 + tj, k);
    }
  }
}

// Factors the staged lower triangle (nt x nt tiles, padded with the identity past n) in
// place. Returns the LAPACK info on every thread. (A look-ahead version, which factored
// diagonal tile k + 1 with warp 0 while the other warps finished the update of step k,
// was slower at every size measured: the extra barrier phase for tile column k + 1
// costs more than the little update left to overlap when nt <= 10. Again with as many
// barriers as this loop, tile column k + 1's update first, the rest beside the next
// chain (tools/tile_phase_probe.cu's lookahead, H200,
// results/h200-2026-11-28-chain-pipeline-probe-ab.txt): with the pipelined chain,
// float64 96 / 128 / 160 7% / 3% / 0.7% slower, float32 192 / 256 3% / 0.4%; before it,
// float64 128 / 160 3-4% faster. The other warps' MMAs slow the chain they overlap.)
//
// While warp 0 factors diagonal tile k, the block's other warps hand tile column k - 1,
// final since the panel solve of step k - 1, to out.segment(k - 1, thread, threads)
// (tile_potrf.cu writes it to memory; tile_posv.cu also forward-solves with it); the
// caller writes the last one.
// On entry only tile (0, 0) need be staged and visible to warp 0 (after a block
// barrier): the other tiles may still be arriving by the caller's cp.async copies, which
// every thread waits for before the first block barrier here.
template <typename T, bool kMma, typename Out>
__device__ int tile_potrf(T* s, T* col, T* cb, int nt, int* info_s, const Out& out) {
  const int warp = threadIdx.x / 32;
  if (threadIdx.x == 0) *info_s = 0;
  for (int k = 0; k < nt; ++k) {
    if (warp == 0) {
      const int inf = tile_factor_diag(tile_at(s, k, k), col, cb);
      // The first failure is kept: a compare-and-swap, since a plain test of *info_s
      // was loaded by all of warp 0's lanes (speculated past the lane test) while lane 0
      // stored, which racecheck reports as a warp-level hazard.
      if (threadIdx.x == 0 && inf != 0) atomicCAS(info_s, 0, kTile * k + inf);
    } else if (k > 0) {
      out.segment(k - 1, threadIdx.x - kTile, blockDim.x - kTile);
    }
    // The stage's tiles past (0, 0) may still be arriving while the first diagonal tile
    // is factored (tile_stage.cuh's tile_stage_in).
    if (k == 0) cp_async_wait<0>();
    __syncthreads();
    if (k + 1 < nt) {
      tile_solve_panel(s, nt, k, col);
      __syncthreads();
      tile_update_trailing<T, kMma>(s, nt, k);
      __syncthreads();
    }
  }
  return *info_s;
}

}  // namespace cuda
}  // namespace batchchol
