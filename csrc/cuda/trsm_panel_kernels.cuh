// Kernel template and host launcher of the panel triangular solves
// (trsm_panel_device.cuh). Included by one instantiation unit per real dtype
// (trsm_panel_f32.cu, trsm_panel_f64.cu), which defines the entry points of
// trsm_panel_launch.h.
#pragma once

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include <climits>
#include <cstdlib>

#include "cuda/launch_utils.h"
#include "cuda/trsm_panel_device.cuh"
#include "cuda/trsm_panel_launch.h"

namespace batchchol {
namespace cuda {

// Block (system sys, column group g): columns [g * KC, min(k, g * KC + KC)) of B into S,
// the passes, S into X. Columns past k are zeros in S and never stored.
template <typename T, int KC>
__global__ void __launch_bounds__(kPanelMaxWarps * 32)
    trsm_panel_kernel(const T* __restrict__ A, const T* B, T* X, PanelParams p) {
  constexpr int LD = panel_ld<T, KC>();
  extern __shared__ __align__(16) unsigned char panel_smem_raw[];
  T* const S = reinterpret_cast<T*>(panel_smem_raw);
  const int W = blockDim.x >> 5;
  const int w = threadIdx.x >> 5;
  const int lane = threadIdx.x & 31;
  T* const bufs = S + p.s_elems + w * (kPanelBuffers * kPanelTileElems);

  const int64_t sys = blockIdx.x / p.groups;
  const int c0 = (blockIdx.x - int(sys * p.groups)) * KC;
  const int ncols = min(KC, p.k - c0);
  const TrsmView& v = p.v1;
  const int n = v.n;
  const int rows = panel_s_rows(n);
  const int off = (rows - n) / 2;
  const int64_t bo = sys * p.b_stride + int64_t(c0) * v.cs;
  const T* a = A + sys * p.a_stride;

  // Consecutive threads read consecutive addresses of B: along a row (cs == 1, left
  // solves) or along a column (right solves).
  const bool by_row = v.cs == 1;
  for (int e = threadIdx.x; e < rows * KC; e += blockDim.x) {
    const int t = by_row ? e / KC : e % rows;
    const int c = by_row ? e % KC : e / rows;
    const int pr = t - off;
    S[t * LD + c] = (pr >= 0 && pr < n && c < ncols) ? B[bo + pr * v.rs + c * v.cs] : T(0);
  }
  __syncthreads();
  panel_pass<T, KC>(a, v, S, off, bufs, w, W, lane);
  if (p.passes == 2) panel_pass<T, KC>(a, p.v2, S, off, bufs, w, W, lane);
  for (int e = threadIdx.x; e < n * KC; e += blockDim.x) {
    const int pr = by_row ? e / KC : e % n;
    const int c = by_row ? e % KC : e / n;
    if (c < ncols) X[bo + pr * v.rs + c * v.cs] = S[(pr + off) * LD + c];
  }
}

template <typename T, int KC>
size_t panel_smem_bytes(int n, int warps, int& s_elems) {
  const size_t s = size_t(panel_s_rows(n)) * panel_ld<T, KC>() * sizeof(T);
  s_elems = int((s + 15) / 16 * 16 / sizeof(T));
  return size_t(s_elems) * sizeof(T) +
         size_t(warps) * kPanelBuffers * kPanelTileElems * sizeof(T);
}

// Calls f(integral_constant<KC>) for a column-group width.
template <typename F>
void with_panel_columns(int kc, F&& f) {
  switch (kc) {
    case 1: return f(std::integral_constant<int, 1>{});
    case 4: return f(std::integral_constant<int, 4>{});
    case 8: return f(std::integral_constant<int, 8>{});
    default: return f(std::integral_constant<int, 16>{});
  }
}

// The widest group (16, 8, 4 or 1 columns, no wider than k needs, at most max_kc) whose
// block fits the shared memory; 0 if none does.
template <typename T>
int panel_columns(int n, int64_t k, int warps, int max_kc) {
  const size_t limit = max_dynamic_smem();
  const int want = std::min(max_kc, k <= 1 ? 1 : k <= 4 ? 4 : k <= 8 ? 8 : 16);
  for (int kc : {16, 8, 4, 1}) {
    if (kc > want) continue;
    size_t bytes = 0;
    with_panel_columns(kc, [&](auto c) {
      int s_elems = 0;
      bytes = panel_smem_bytes<T, decltype(c)::value>(n, warps, s_elems);
    });
    if (bytes <= limit) return kc;
  }
  return 0;
}

// Blocks up to which the panel kernels run 8 warps a block and are the default past
// n = 128: each system has an SM (or half of one) to itself, and 8 warps stream its
// triangle fastest. Beyond, the warp-per-system kernels keep more loads in flight per SM.
// H200, float64, 2026-11-26 (results/h200-2026-11-26-panel-tune_trsm.txt), panel / warp
// ms: trsm n = 512, 16 columns, 256 systems 0.473 / 0.822, 1024 systems 2.090 / 1.129;
// n = 256, 1 column, 256 systems 0.109 / 0.147, 1024 systems 0.210 / 0.178; potrs
// n = 1024, 16 columns, 256 systems 3.125 / 4.471, 1024 systems 12.31 / 6.84.
inline int64_t panel_wide_blocks() {
  return 2 * int64_t(at::cuda::getCurrentDeviceProperties()->multiProcessorCount);
}

// Warps per block: 8 below panel_wide_blocks, else 4. BATCHCHOL_PANEL_WARPS = 4 | 8
// forces it.
inline int panel_warps(int64_t blocks) {
  if (const char* env = std::getenv("BATCHCHOL_PANEL_WARPS")) {
    const int w = std::atoi(env);
    TORCH_CHECK(w == 4 || w == 8, "batchchol: BATCHCHOL_PANEL_WARPS must be 4 or 8");
    return w;
  }
  return blocks < panel_wide_blocks() ? 8 : 4;
}

// Widest column group allowed: BATCHCHOL_PANEL_KC (1, 4, 8 or 16) caps it.
inline int panel_max_columns() {
  if (const char* env = std::getenv("BATCHCHOL_PANEL_KC")) {
    const int kc = std::atoi(env);
    TORCH_CHECK(kc >= 1, "batchchol: BATCHCHOL_PANEL_KC must be 1, 4, 8 or 16");
    return kc;
  }
  return 16;
}

// Orders whose block (8 warps) fits with at least one column: panel_columns tries one
// column last, so any width it returns implies that one fits too.
inline bool panel_order_ok(int64_t n) { return n >= 1 && n < (1 << 20); }

template <typename T>
bool panel_fits_impl(int64_t n) {
  return panel_order_ok(n) && panel_columns<T>(int(n), 1, kPanelMaxWarps, 1) == 1;
}

template <typename T>
bool panel_preferred_impl(int64_t n, int64_t k, int64_t batch) {
  if (!panel_order_ok(n)) return false;
  const int kc = panel_columns<T>(int(n), k, kPanelMaxWarps, panel_max_columns());
  return kc > 0 && batch * ((k + kc - 1) / kc) < panel_wide_blocks();
}

template <typename T>
void launch_panel_impl(const T* A, int64_t a_stride, const T* B, T* X, int64_t batch, int64_t k,
                       const TrsmView& v1, const TrsmView* v2, cudaStream_t stream) {
  const int n = v1.n;
  TORCH_CHECK(k <= INT_MAX, "batchchol: too many right-hand sides");
  const int max_kc = panel_max_columns();
  // Warps first from the batch at the widest group, then the group for those warps.
  int kc = panel_columns<T>(n, k, kPanelMaxWarps, max_kc);
  const int64_t groups0 = (k + std::max(kc, 1) - 1) / std::max(kc, 1);
  const int warps = panel_warps(batch * groups0);
  if (warps != kPanelMaxWarps) kc = panel_columns<T>(n, k, warps, max_kc);  // fewer buffers
  TORCH_CHECK(kc > 0, "batchchol: order ", n, " too large for the panel solves");
  PanelParams p{};
  p.a_stride = a_stride;
  p.b_stride = int64_t(n) * k;
  p.v1 = v1;
  p.v2 = v2 ? *v2 : v1;
  p.passes = v2 ? 2 : 1;
  p.k = int(k);
  p.groups = int((k + kc - 1) / kc);
  const int64_t blocks = batch * p.groups;
  TORCH_CHECK(blocks <= INT_MAX, "batchchol: batch too large for one launch");
  with_panel_columns(kc, [&](auto c) {
    constexpr int KC = decltype(c)::value;
    const size_t smem = panel_smem_bytes<T, KC>(n, warps, p.s_elems);
    auto kernel = trsm_panel_kernel<T, KC>;
    allow_dynamic_smem(kernel, smem);
    kernel<<<unsigned(blocks), warps * 32, smem, stream>>>(A, B, X, p);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

// The entry points of trsm_panel_launch.h for one dtype; each instantiation unit
// (trsm_panel_f32.cu, trsm_panel_f64.cu) expands it once, inside namespace batchchol::cuda.
#define BATCHCHOL_DEFINE_PANEL(T)                                                        \
  bool panel_fits(int64_t n, const T*) { return panel_fits_impl<T>(n); }                 \
  bool panel_preferred(int64_t n, int64_t k, int64_t batch, const T*) {                  \
    return panel_preferred_impl<T>(n, k, batch);                                         \
  }                                                                                      \
  void launch_trsm_panel(const T* A, int64_t a_stride, const T* B, T* X, int64_t batch,  \
      int64_t k, const TrsmView& v, cudaStream_t stream) {                               \
    launch_panel_impl(A, a_stride, B, X, batch, k, v, nullptr, stream);                  \
  }                                                                                      \
  void launch_potrs_panel(const T* L, int64_t l_stride, const T* B, T* X, int64_t batch, \
      int64_t k, const TrsmView& v1, const TrsmView& v2, cudaStream_t stream) {          \
    launch_panel_impl(L, l_stride, B, X, batch, k, v1, &v2, stream);                     \
  }

}  // namespace cuda
}  // namespace batchchol
