// Launchers of the warp family (warp_chol_kernels.cuh, warp64_chol.cuh): n <=
// warp_chol_max_n<T>(), 64 for float32 and 48 for float64 (posv: warp_posv_max_n). Up
// to 32 the orders are compile-time (padded); past 32 one warp per matrix runs a
// run-time column loop (warp64). (Unrolled orders up to 64 were measured on an H100, 2026-11-22: the kernels grow
// to 140-200 KB of code past n = 32 and run at 0.36 / 0.18 of the roofline for n = 48 /
// 64, against 0.75 for n = 16; benchmarks/KERNEL-NOTES.md.)
// Buffers are contiguous [batch, n, n] (A, L) and [batch, n, k] (B, X), row-major;
// launches go to `stream` and never synchronize the host.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace batchchol {
struct RaggedBatch;
namespace cuda {
struct SizeGroups;
struct LaunchStreams;
struct RaggedPrologue;

// Largest n the family serves for T (0: the family does not serve T; complex types go
// through the generic kernels of potrf_kernels.cuh / posv_kernels.cuh).
template <typename T>
constexpr int warp_chol_max_n() {
  return std::is_same_v<T, float> ? 64 : std::is_same_v<T, double> ? 48 : 0;
}

// Largest n of the family's fused posv: float64 stops at 32, where the wide family's
// fused posv takes over (H200, 100,000 systems, posv_solve with one column, wide / warp64:
// n = 36 2.289 / 2.438 ms, 40 2.448 / 2.788, 48 2.863 / 3.365;
// benchmarks/results/h200-2026-11-28-round45-warp64-f64-ab.txt).
template <typename T>
constexpr int warp_posv_max_n() {
  return std::is_same_v<T, double> ? 32 : warp_chol_max_n<T>();
}

// The compile-time orders of the family up to 32 (warp_chol_launch.cuh): n runs at the
// smallest order NP >= n, exact up to 8, then in steps of 2, 4 and 8, so that padding
// adds at most ~25% to a side. Class c (0 <= c < kWarpOrderClasses) holds the sizes
// warp_order(c - 1) + 1 .. warp_order(c); the ragged dispatch groups a batch by class.
constexpr int kWarpOrderClasses = 16;
constexpr int warp_order_class(int n) {
  return n <= 8 ? n - 1 : n <= 16 ? 8 + (n - 9) / 2 : 12 + (n - 17) / 4;
}
constexpr int warp_order(int c) { return c < 8 ? c + 1 : c < 12 ? 2 * c - 6 : 4 * c - 28; }
static_assert(warp_order_class(32) == kWarpOrderClasses - 1 && warp_order(15) == 32 &&
                  warp_order(8) == 10 && warp_order_class(10) == 8 && warp_order_class(11) == 9 &&
                  warp_order(12) == 20 && warp_order_class(21) == 13,
              "the order table and its classes must agree");

// Lanes per matrix P of order np. Measured on an H100 (benchmarks/tune_posv.py,
// 2026-11-22): for float32 NP = 32, potrf runs faster with 16 lanes (0.433 vs 0.521 ms,
// 100,000 matrices: fewer registers and half the unrolled multiply-adds), posv then with
// 8 (0.430 vs 0.458 ms). Since the staging copies take the order as a constant
// (2026-11-23, BATCHCHOL_WARP_P32 in one run, results/h100-2026-11-23-posv-lanes-*),
// posv is faster with 16 as well: posv_solve 0.362 vs 0.391 ms, posv 0.513 vs 0.538.
// Since posv's first forward sweep rides along with the factorization and its other
// sweeps read the staged factor (2026-11-25, results/h100-2026-11-25-warp-posv-lanes-tune.txt),
// posv_solve runs faster with 8 again (0.292 vs 0.319 ms, four columns 0.439 vs 0.476;
// potrf stays at 16: 0.347 vs 0.391): at 168 registers (160 under posv_warp_max_regs since
// the rsqrt pivots) against 127, 12 warps of four
// systems each hold 48 systems per SM against 32. posv with L at n = 29..31 (padded, element
// copies) is 4-6% slower on 8 (k = 1 0.652 vs 0.628 ms). The same for float64 posv at NP =
// 20 and 24 (152 / 160 registers against 132 / 142, 12 warps by registers either way, 11
// by shared memory at n = 24 on 8 lanes: 44-48 systems per SM against 24;
// results/h100-2026-11-25-f64-posv-lanes-ab.txt,
// 100,000 systems): posv_solve n = 17 0.346 -> 0.254 ms, 20 0.328 -> 0.241, 24 0.420 ->
// 0.329, four columns at 24 0.609 -> 0.465; not at NP = 28 and 32 (226 / 234 registers, 8
// warps, and the square stage of four systems per warp fits 6: n = 32 0.599 -> 0.642).
template <typename T, bool kPosv>
constexpr int warp_lanes(int np) {
  if (np <= 4) return 1;
  if (np <= 8) return 2;
  if (sizeof(T) == 4) return np <= 16 ? 4 : np == 32 && !kPosv ? 16 : 8;
  return np <= 16 || (kPosv && np <= 24) ? 8 : 16;
}

// L (not aliasing A) receives the factor with the other triangle zeroed.
void launch_potrf_warp(const float* A, float* L, int* info, int64_t batch, int n, bool upper,
                       cudaStream_t stream);
void launch_potrf_warp(const double* A, double* L, int* info, int64_t batch, int n, bool upper,
                       cudaStream_t stream);

// Right-hand sides up to which posv_vbatched's one pass of the warp kernels (max_n <= 32)
// beats potrf_vbatched + the ragged solves, from benchmarks/tune_posv.py --ragged
// (posv_cuda.cu, beside the fixed-size table).
int posv_vbatched_fused_max_k(bool is_double);

// X = A^-1 B with the factor on chip; L may be null (the factor is then not written).
// Returns false, launching nothing, when n is outside the family's range.
bool launch_posv_warp(const float* A, const float* B, float* X, float* L, int* info,
                      int64_t batch, int n, int k, bool upper, cudaStream_t stream);
bool launch_posv_warp(const double* A, const double* B, double* X, double* L, int* info,
                      int64_t batch, int n, int k, bool upper, cudaStream_t stream);

// Batches of at most this many matrices with sizes past 16 (the three ranges all
// launched) run every class in one launch: their calls are bound by host time and by
// the launches' tails (on one stream each of the three launches waits for the one
// before), and they use little of the occupancy that the one launch's registers cost
// (when measured: float32 potrf 128, posv 168; float64 211 / 232). H100,
// 5,000 matrices of sizes uniform in 1..32: GPU time per call float32 53 -> 35 us,
// float64 70 -> 58, two launches less host time; 50,000 float64 matrices: 273 -> 325.
constexpr int64_t kWarpOneLaunchMax = 16384;

// Ragged batches: the matrices of sg's warp part (ragged_bins.h), in up to three
// launches (warp_chol_launch.cuh), launch i on streams[i] (stream_fanout.h); their info
// entries are written, nothing else of the batch is touched.
void launch_potrf_warp_groups(const float* A, float* L, int* info, const RaggedBatch& rb,
                              const SizeGroups& sg, bool upper, const LaunchStreams& streams);
void launch_potrf_warp_groups(const double* A, double* L, int* info, const RaggedBatch& rb,
                              const SizeGroups& sg, bool upper, const LaunchStreams& streams);

// potrf_vbatched and its fused prologue (ragged_prologue.h, set up but not launched) in
// one cooperative launch (warp_ragged_one.cuh), where every matrix goes to the warp family
// in one launch: p grouped in one pass with no tile part, orders past 16, at most
// warp_one_max_count<T>() matrices (8,192 float32, 2,048 float64: warp_ragged_one.cuh);
// and where the device takes it (cooperative launches, the
// shared memory of a block of kStatusThreads) and the stream is not capturing a graph.
// Returns false, launching nothing, otherwise.
bool launch_potrf_warp_one(const float* A, float* L, int* info, const RaggedPrologue& p,
                           bool upper, cudaStream_t stream);
bool launch_potrf_warp_one(const double* A, double* L, int* info, const RaggedPrologue& p,
                           bool upper, cudaStream_t stream);

// posv_vbatched for the matrices of sg's warp part: their factor into L and info as
// launch_potrf_warp_groups, and the solution of their right-hand-side blocks (n_i x k at
// rb.b_offsets, k = -1: n_i x n_i) into X, from the factor on chip.
void launch_posv_warp_groups(const float* A, const float* B, float* X, float* L, int* info,
                             const RaggedBatch& rb, const SizeGroups& sg, int64_t k, bool upper,
                             const LaunchStreams& streams);
void launch_posv_warp_groups(const double* A, const double* B, double* X, double* L, int* info,
                             const RaggedBatch& rb, const SizeGroups& sg, int64_t k, bool upper,
                             const LaunchStreams& streams);

// Ragged batches: the matrices of group g of sg, whose sizes are 33..kWarp64RaggedMaxN
// (two tile columns), one warp per matrix (warp64_ragged.cuh), in one launch on
// `stream`; their info entries are written, nothing else of the batch is touched.
// Returns false, launching nothing, where the device's shared memory per block does not
// hold the kernel's (float64: 70,656 bytes; sm_80 and later hold it).
constexpr int kWarp64RaggedMaxN = 64;
bool launch_potrf_warp64_group(const float* A, float* L, int* info, const RaggedBatch& rb,
                               const SizeGroups& sg, int g, bool upper, cudaStream_t stream);
bool launch_potrf_warp64_group(const double* A, double* L, int* info, const RaggedBatch& rb,
                               const SizeGroups& sg, int g, bool upper, cudaStream_t stream);

}  // namespace cuda
}  // namespace batchchol
