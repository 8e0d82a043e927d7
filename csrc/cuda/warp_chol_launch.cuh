// Size dispatch of the warp family: each n runs the kernels of the smallest padded
// order NP >= n from the table below (exact up to 8, then steps of 2, 4, 8), with P
// lanes per matrix chosen so that a lane's rows stay within ~100 registers:
//   float32: NP <= 4: P = 1, <= 8: 2, <= 16: 4, <= 32: 8 (16 for potrf at NP = 32)
//   float64: NP <= 4: P = 1, <= 8: 2, <= 16: 8, <= 32: 16
// and, for float32 33 <= n <= 64, one warp per matrix with a run-time column loop
// (warp64_chol.cuh).
// Included by one instantiation unit per op and dtype (warp_potrf_f32.cu, ...).
#pragma once

#include <c10/cuda/CUDAException.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cstdlib>
#include <cstdint>
#include <string>
#include <type_traits>

#include "cuda/launch_utils.h"
#include "cuda/warp64_chol.cuh"
#include "cuda/warp_chol_kernels.cuh"
#include "cuda/warp_chol_launch.h"

namespace batchchol {
namespace cuda {

template <int V>
using Int = std::integral_constant<int, V>;

// Measured on an H100 (benchmarks/tune_posv.py, 2026-11-22): for float32 NP = 32, potrf
// runs faster with 16 lanes (0.433 vs 0.521 ms, 100,000 matrices: fewer registers and
// half the unrolled multiply-adds), posv with 8 (0.430 vs 0.458 ms).
template <typename T, bool kPosv>
constexpr int warp_lanes(int np) {
  if (np <= 4) return 1;
  if (np <= 8) return 2;
  if (sizeof(T) == 4) return np <= 16 ? 4 : (np == 32 && !kPosv) ? 16 : 8;
  return np <= 16 ? 8 : 16;
}

// BATCHCHOL_WARP_P32=8 or 16 overrides the lanes per matrix of float32 NP = 32 (a
// tuning switch, read at every call like BATCHCHOL_POTRF_KERNEL); 0: the table.
inline int float32_np32_lanes() {
  const char* env = std::getenv("BATCHCHOL_WARP_P32");
  return env != nullptr ? std::atoi(env) : 0;
}

// Calls f(Int<NP>{}, Int<P>{}) for the padded order serving n (1 <= n <= max).
template <typename T, bool kPosv, typename F>
void with_padded_order(int n, F&& f) {
  auto go = [&](auto np) {
    constexpr int NP = decltype(np)::value;
    if constexpr (sizeof(T) == 4 && NP == 32) {
      const int lanes = float32_np32_lanes();
      if (lanes == 8) return f(np, Int<8>{});
      if (lanes == 16) return f(np, Int<16>{});
    }
    f(np, Int<warp_lanes<T, kPosv>(NP)>{});
  };
  switch (n) {
    case 1: return go(Int<1>{});
    case 2: return go(Int<2>{});
    case 3: return go(Int<3>{});
    case 4: return go(Int<4>{});
    case 5: return go(Int<5>{});
    case 6: return go(Int<6>{});
    case 7: return go(Int<7>{});
    case 8: return go(Int<8>{});
    default: break;
  }
  if (n <= 16) {
    if (n <= 10) return go(Int<10>{});
    if (n <= 12) return go(Int<12>{});
    if (n <= 14) return go(Int<14>{});
    return go(Int<16>{});
  }
  if (n <= 32) {
    if (n <= 20) return go(Int<20>{});
    if (n <= 24) return go(Int<24>{});
    if (n <= 28) return go(Int<28>{});
    return go(Int<32>{});
  }
  TORCH_CHECK(false, "batchchol: n = ", std::to_string(n), " is outside the warp kernels' range");
}

// Warps per block: blocks of at least ~16 KB of staged matrices (fewer, larger copies
// per barrier), at most 8 warps.
template <typename T, int P>
int warp_blocks_warps(const StageLayout& lay) {
  const int warp_bytes = (32 / P) * lay.ms * int(sizeof(T));
  return std::max(1, std::min(8, 16384 / warp_bytes));
}

template <typename T>
bool stage_vectorizable(const void* a, const void* b, int n) {
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  return (int64_t(n) * n * sizeof(T)) % 16 == 0 && aligned(a) && (b == nullptr || aligned(b));
}

// One warp per matrix for 32 < n <= 64 (warp64_chol.cuh): the stage layout and launch
// shape (threads, shared memory) of either kernel.
template <typename T>
struct Warp64Launch {
  StageLayout lay;
  int threads;
  size_t smem;
  explicit Warp64Launch(int n) : lay(make_stage_layout<32>(n)) {
    threads = 32 * warp_blocks_warps<T, 32>(lay);
    smem = size_t(threads / 32) * (lay.ms + kWarp64ColBuf) * sizeof(T);
  }
  unsigned blocks(int64_t batch) const { return ceil_div(batch, threads / 32); }
};

template <typename T>
void launch_potrf_warp_impl(const T* A, T* L, int* info, int64_t batch, int n, bool upper,
                            cudaStream_t stream) {
  if constexpr (sizeof(T) == 4) {
    if (n > 32) {
      const Warp64Launch<T> w(n);
      auto kernel = potrf_warp64_kernel<T>;
      allow_dynamic_smem(kernel, w.smem);
      kernel<<<w.blocks(batch), w.threads, w.smem, stream>>>(A, L, info, batch, w.lay, upper,
                                                             stage_vectorizable<T>(A, L, n));
      C10_CUDA_KERNEL_LAUNCH_CHECK();
      return;
    }
  }
  with_padded_order<T, false>(n, [&](auto np, auto p) {
    constexpr int NP = decltype(np)::value, P = decltype(p)::value;
    const StageLayout lay = make_stage_layout<P>(n);
    const int threads = 32 * warp_blocks_warps<T, P>(lay);
    const int per_block = threads / P;
    const size_t smem = size_t(per_block) * lay.ms * sizeof(T);
    auto kernel = potrf_warp_kernel<T, NP, P>;
    allow_dynamic_smem(kernel, smem);
    kernel<<<ceil_div(batch, per_block), threads, smem, stream>>>(
        A, L, info, batch, lay, upper, stage_vectorizable<T>(A, L, n));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

template <typename T>
bool launch_posv_warp_impl(const T* A, const T* B, T* X, T* L, int* info, int64_t batch, int n,
                           int k, bool upper, cudaStream_t stream) {
  if (n < 1 || n > warp_chol_max_n<T>()) return false;
  if constexpr (sizeof(T) == 4) {
    if (n > 32) {
      const Warp64Launch<T> w(n);
      auto kernel = posv_warp64_kernel<T>;
      allow_dynamic_smem(kernel, w.smem);
      kernel<<<w.blocks(batch), w.threads, w.smem, stream>>>(
          A, B, X, L, info, batch, k, w.lay, upper, stage_vectorizable<T>(A, L, n));
      C10_CUDA_KERNEL_LAUNCH_CHECK();
      return true;
    }
  }
  with_padded_order<T, true>(n, [&](auto np, auto p) {
    constexpr int NP = decltype(np)::value, P = decltype(p)::value;
    const StageLayout lay = make_stage_layout<P>(n);
    const int threads = 32 * warp_blocks_warps<T, P>(lay);
    const int per_block = threads / P;
    const size_t smem = size_t(per_block) * lay.ms * sizeof(T);
    auto kernel = posv_warp_kernel<T, NP, P>;
    allow_dynamic_smem(kernel, smem);
    kernel<<<ceil_div(batch, per_block), threads, smem, stream>>>(
        A, B, X, L, info, batch, k, lay, upper, stage_vectorizable<T>(A, L, n));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return true;
}

}  // namespace cuda
}  // namespace batchchol
