// Kernel template and host launchers of the streaming triangular solves
// (trsm_stream_device.cuh). Included by one instantiation unit per dtype
// (trsm_stream_f32.cu, ...), which defines the entry points of trsm_stream_launch.h.
#pragma once

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include <algorithm>
#include <climits>
#include <type_traits>

#include "cuda/launch_utils.h"
#include "cuda/trsm_kernels.cuh"
#include "cuda/trsm_stream_device.cuh"
#include "cuda/trsm_stream_launch.h"

namespace batchchol {
namespace cuda {

// Pipeline depth: S - 1 tiles in flight per warp. 16-byte elements (complex128) make
// 17 KB tiles, so they keep one tile in flight.
template <typename T>
constexpr int stream_stages() {
  return sizeof(T) == 4 ? 4 : sizeof(T) == 8 ? 3 : 2;
}

// Pass 0 solves with view v0 from B into X; pass 1 (potrs) solves with v1 in place on X.
// Every loop trip is uniform across the warp (the cursors depend on the warp only).
template <typename T, int NP, int CPW, int S>
__global__ void __launch_bounds__(kStreamWarps * 32)
    trsm_stream_kernel(const T* __restrict__ A, const T* B, T* X, TrsmView v0, TrsmView v1,
                       StreamParams p) {
  extern __shared__ __align__(16) unsigned char stream_smem_raw[];
  const int lane = threadIdx.x & 31;
  T* const wsm = reinterpret_cast<T*>(stream_smem_raw) +
                 (threadIdx.x >> 5) * (stream_warp_smem_bytes<T, CPW, S>() / sizeof(T));
  T* const Xs = wsm + S * stream_slot_elems<T, CPW>();
  constexpr int kBs = kTrsmTile * kTrsmTileLd;

  const int64_t stride = int64_t(gridDim.x) * kStreamWarps;
  StreamCursor cc{int64_t(blockIdx.x) * kStreamWarps + (threadIdx.x >> 5), 0, 0, 0};
  StreamCursor cp = cc;
  int slot_p = 0, slot_c = 0;

  auto issue = [&]() {
    if (cp.unit < p.units) {
      int64_t sys0;
      int c0, ncols;
      stream_unit<NP, CPW>(p, cp.unit, sys0, c0, ncols);
      T* slot = wsm + slot_p * stream_slot_elems<T, CPW>();
      const TrsmView v = cp.pass == 0 ? v0 : v1;  // a copy: a reference would live on the stack
      stream_issue<T, NP, CPW>(A, B, v, p, sys0, c0, ncols, cp.R, cp.C,
                               cp.pass == 0 && cp.C == 0, slot, slot + kBs, lane);
    }
    cp_async_commit();
    stream_advance(cp, p, stride);
    slot_p = slot_p + 1 == S ? 0 : slot_p + 1;
  };

#pragma unroll 1
  for (int s = 0; s < S - 1; ++s) issue();

  T acc[CPW];
#pragma unroll 1
  while (cc.unit < p.units) {
    __syncwarp();  // every lane is done with the slot the next copies overwrite
    issue();
    int64_t sys0;
    int c0, ncols;
    stream_unit<NP, CPW>(p, cc.unit, sys0, c0, ncols);
    const TrsmView v = cc.pass == 0 ? v0 : v1;
    const StreamRow<NP> row(p, v, sys0, c0, cc.R, lane);
    T* const dst = X;
    // An update tile needs solution rows this lane wrote earlier in this pass; their
    // load is issued before the wait so that its latency overlaps it.
    T y[CPW];
    if (cc.C < cc.R) {
      const int64_t yoff = row.off - int64_t(v.rev ? -1 : 1) * (cc.R - cc.C) * kTrsmTile * v.rs;
#pragma unroll
      for (int c = 0; c < CPW; ++c) y[c] = c < ncols ? dst[yoff + c * v.cs] : T(0);
    }
    cp_async_wait<S - 1>();
    __syncwarp();  // the other lanes' copies of this slot are visible
    const T* slot = wsm + slot_c * stream_slot_elems<T, CPW>();
    if (cc.C == 0) {
      if (cc.pass == 0) {
        const T* bs = slot + kBs + lane * stream_bs_ld<CPW>();
#pragma unroll
        for (int c = 0; c < CPW; ++c) acc[c] = row.ok && c < ncols ? bs[c] : T(0);
      } else {
        // The backward pass starts from X, written by other lanes before the
        // __syncwarp at the top of this trip.
#pragma unroll
        for (int c = 0; c < CPW; ++c) acc[c] = row.ok && c < ncols ? X[row.off + c * v.cs] : T(0);
      }
    }
    if (cc.C < cc.R) {
      stream_update<T, CPW>(slot, Xs, y, acc, v.conj, lane);
    } else {
      const int steps = NP < kTrsmTile ? v.n : min(kTrsmTile, v.n - cc.R * kTrsmTile);
      stream_diag<T, NP, CPW>(slot, acc, v, row.ok, steps, lane);
      if (row.ok) {
#pragma unroll
        for (int c = 0; c < CPW; ++c)
          if (c < ncols) dst[row.off + c * v.cs] = acc[c];
      }
    }
    stream_advance(cc, p, stride);
    slot_c = slot_c + 1 == S ? 0 : slot_c + 1;
  }
  cp_async_wait<0>();
}

// Calls f(integral_constant<NP>) for the tile packing of order n: real types pack
// small systems; complex ones (correct, not tuned) always use whole tiles, which keeps
// their instantiations few.
template <typename T, typename F>
void with_stream_order(int64_t n, F&& f) {
  if constexpr (!IsComplex<T>::value) {
    if (n <= 4) return f(std::integral_constant<int, 4>{});
    if (n <= 8) return f(std::integral_constant<int, 8>{});
    if (n <= 16) return f(std::integral_constant<int, 16>{});
  }
  f(std::integral_constant<int, kTrsmTile>{});
}

template <typename T>
void launch_stream_impl(const T* A, int64_t a_stride, const T* B, T* X, int64_t batch,
                        int64_t k, const TrsmView& v0, const TrsmView* v1, cudaStream_t stream) {
  const int64_t n = v0.n;
  with_stream_order<T>(n, [&](auto np) {
    constexpr int NP = decltype(np)::value;
    constexpr int G = kTrsmTile / NP;
    StreamParams p{};
    p.batch = batch;
    p.a_stride = a_stride;
    p.b_stride = n * k;
    p.nblk = NP < kTrsmTile ? 1 : int((n + kTrsmTile - 1) / kTrsmTile);
    p.npass = v1 != nullptr ? 2 : 1;
    trsm_split_columns<T>(k, [&](auto cpw, int64_t col_begin, int64_t col_end) {
      constexpr int CPW = decltype(cpw)::value;
      constexpr int S = stream_stages<T>();
      TORCH_CHECK(col_end <= INT_MAX, "batchchol: too many right-hand sides");
      p.col_begin = int(col_begin);
      p.col_end = int(col_end);
      p.groups = int((col_end - col_begin + CPW - 1) / CPW);
      p.units = (batch + G - 1) / G * p.groups;
      auto kernel = trsm_stream_kernel<T, NP, CPW, S>;
      const size_t smem = kStreamWarps * stream_warp_smem_bytes<T, CPW, S>();
      allow_dynamic_smem(kernel, smem);
      const int64_t blocks = resident_blocks(kernel, kStreamWarps * 32, smem,
                                             (p.units + kStreamWarps - 1) / kStreamWarps);
      kernel<<<unsigned(blocks), kStreamWarps * 32, smem, stream>>>(A, B, X, v0,
                                                                     v1 ? *v1 : v0, p);
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    });
  });
}

// The entry points of trsm_stream_launch.h for one dtype; each instantiation unit
// (trsm_stream_f32.cu, ...) expands it once, inside namespace batchchol::cuda.
#define BATCHCHOL_DEFINE_STREAM(T)                                                          \
  void launch_trsm_stream(const T* A, int64_t a_stride, const T* B, T* X, int64_t batch,    \
                          int64_t k, const TrsmView& v, cudaStream_t stream) {              \
    launch_stream_impl(A, a_stride, B, X, batch, k, v, nullptr, stream);                    \
  }                                                                                         \
  void launch_potrs_stream(const T* L, int64_t l_stride, const T* B, T* X, int64_t batch,   \
                           int64_t k, const TrsmView& v1, const TrsmView& v2,               \
                           cudaStream_t stream) {                                           \
    launch_stream_impl(L, l_stride, B, X, batch, k, v1, &v2, stream);                       \
  }

}  // namespace cuda
}  // namespace batchchol
