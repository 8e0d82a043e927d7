// Staging of the tile potrf family (tile_chol.cuh) between memory and the packed tiles,
// and the kernel's shared-memory carve-up: shared by its kernels (tile_potrf.cu) and
// by the phase probe (tools/tile_phase_probe.cu), which times the same staging.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cuda/async_copy.cuh"
#include "cuda/tile_chol.cuh"
#include "cuda/tile_packed.cuh"

namespace batchchol {
namespace cuda {

// Copies the tiles on and below the diagonal of the working matrix W (W = A for a lower
// factor, A^T for an upper one) into s, entries past n as the identity (kPacked: all but
// the deferred last diagonal tile, tile_packed.cuh). Consecutive threads take
// consecutive addresses of A: along a tile row of W for lower, along a tile column for
// upper. All copies are in flight at once (cp.async), tile (0, 0) in a
// group of its own: this waits for that one only, so that the first diagonal tile's
// factorization overlaps the other tiles' arrival (tile_potrf waits for them before its
// first block barrier). H200, 10,000 matrices, same bits
// (results/h200-2026-11-28-tile-early-ab.txt): float64 96 0.911 -> 0.887 ms, 128 1.434
// -> 1.423, 160 (tile16) 3.137 -> 3.023; float32 160 / 256 +0.8% / +0.6%.
template <typename T, int NT, bool kPacked = false>
__device__ __forceinline__ void tile_stage_in(T* s, const T* a, int n, int nt, bool upper) {
  for (int I = 0, J = 0, t = 0; kPacked ? t < tile_packed_slots(nt) : I < nt; ++t) {
    T* tile = s + t * kTileElems;
#pragma unroll
    for (int u = 0; u < kTileElems / NT; ++u) {
      const int e = threadIdx.x + u * NT;
      const int r = upper ? (e & 31) : (e >> 5), c = upper ? (e >> 5) : (e & 31);
      const int i = kTile * I + r, j = kTile * J + c;
      T* dst = tile + tile_off<T>(r, c);
      if (i < n && j < n) {
        cp_async_elem(dst, upper ? a + int64_t(j) * n + i : a + int64_t(i) * n + j);
      } else {
        *dst = i == j ? T(1) : T(0);
      }
    }
    if (t == 0) cp_async_commit();  // the last group may then be empty
    if (++J > I) J = 0, ++I;
  }
  cp_async_commit();
  cp_async_wait<1>();
}

// The output entries that come from W's tile column k alone, written while the
// factorization goes on (tile_potrf): lower, the output's tile column k (zeros above
// the diagonal tiles); upper, its tile row k (U = W's factor transposed). Consecutive
// threads take consecutive entries of an output row.
template <typename T, bool kPacked = false>
struct TileSegmentOut {
  T* out;
  const T* s;
  int n, nt;
  bool upper;
  __device__ __forceinline__ void segment(int k, int tid, int nthreads) const {
    for (int I = 0; I < nt; ++I) {
      const int OI = upper ? k : I, OJ = upper ? I : k;  // the output tile
      for (int e = tid; e < kTileElems; e += nthreads) {
        const int r = e >> 5, c = e & 31;
        const int i = kTile * OI + r, j = kTile * OJ + c;
        if (i >= n || j >= n) continue;
        const int wi = upper ? OJ : OI, wj = upper ? OI : OJ, wr = upper ? c : r, wc = upper ? r : c;
        T v = T(0);
        if (wi > wj || (wi == wj && wc <= wr))
          v = (kPacked ? tile_home(s, nt, wi, wj) : tile_at(s, wi, wj))[tile_off<T>(wr, wc)];
        out[int64_t(i) * n + j] = v;
      }
    }
  }
};

template <typename T, bool kPacked = false>
struct TileSmem {  // the kernel's dynamic shared memory
  T* s;    // the packed triangle
  T* col;  // the panel solve's tile (none for the packed stage)
  T* cb;   // the pivot column buffer
  __device__ explicit TileSmem(unsigned char* raw, int nt)
      : s(reinterpret_cast<T*>(raw)),
        col(kPacked ? nullptr : s + tile_count(nt) * kTileElems),
        cb(kPacked ? s + tile_packed_slots(nt) * kTileElems : col + kTileElems) {}
};

// The packed triangle, the panel solve's tile (col) and the pivot column buffer (cb); the
// packed stage (tile_packed.cuh) without col and the deferred last diagonal tile: float64
// 160, 115,456 bytes, two blocks per SM on sm_90 (228 KB, 1 KB reserved a block).
inline size_t tile_smem_bytes(int n, size_t elem_size, bool packed = false) {
  const int nt = (n + kTile - 1) / kTile;
  const size_t tiles = packed ? tile_packed_slots(nt) : tile_count(nt) + 1;
  return (tiles * kTileElems + kChainBuf) * elem_size;
}

}  // namespace cuda
}  // namespace batchchol
