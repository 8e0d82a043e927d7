// Where the tile potrf family's time goes (tile_chol.cuh), on a GPU, without building
// the extension (it needs torch's headers only).
//
// The kernel below is tile_potrf's loop with clock64 stamps at its block barriers, built
// from the same device routines and staging (tile_stage.cuh), so its full variant should
// time like the library's kernel. Each variant then leaves one phase out: the diagonal
// tiles' pivot chains (warp 0), the panel solves, the trailing updates, or the memory
// traffic (stage-in and write-out). What a phase's absence saves is what making that
// phase free could give, with the two blocks per SM overlapping each other as they do
// (a variant's register count, so its blocks per SM, may differ: printed); the stamps
// say how long one block waits in each phase. The variants that leave a phase out run
// on block-diagonal matrices (zero tiles off the diagonal), whose tiles stay positive
// definite with any phase missing: on a full matrix a missing panel solve or diagonal
// factorization lets the later tiles grow indefinite, and float64's rsqrt then takes
// its slow path at every pivot. The full variant runs on both inputs (the times should
// agree: the arithmetic's speed does not depend on finite values). Last, the pivot
// chain alone (potrf_rows_chain, one diagonal tile) with one and four warps per SM: its
// latency, plus ~3% for the harness's reloads and sums.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -Icsrc $(python3 -c 'import torch.utils.cpp_extension as c;
//     print(" ".join("-I" + p for p in c.include_paths()))') tools/tile_phase_probe.cu -o /tmp/probe
//   /tmp/probe            (float64 96 on tile4, 128 on tile, 160 on 16 warps as tile16 runs it;
//                          float32 192 / 256; not the packed stage, tile_packed.cuh)
//   /tmp/probe full       (the full variant only: for A/B runs of two builds)
//   /tmp/probe warps      (the full variant, blocks of four warps against eight)
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cuda/tile_chol.cuh"
#include "cuda/tile_stage.cuh"
#include "probe_check.h"

using namespace batchchol::cuda;

// Phases left out, or kLookahead: step k's update in two parts, tile column k + 1 first
// (all warps), the rest beside the next diagonal tile's chain (warps 1..), as many block
// barriers as the plain loop.
enum Variant { kNone = 0, kNoDiag = 1, kNoPanel = 2, kNoUpdate = 4, kNoMemory = 8, kLookahead = 16 };
enum Stamp { kAtStage, kAtDiag, kAtPanel, kAtUpdate, kAtOut, kStamps };

template <typename T, int NT, bool kMma, int kSkip>
__global__ void __launch_bounds__(NT, 512 / NT)
    probe_kernel(const T* A, T* L, int n, long long* stamps) {
  extern __shared__ __align__(16) unsigned char raw[];
  const int nt = (n + kTile - 1) / kTile;
  const TileSmem<T> sm(raw, nt);
  const long long b = blockIdx.x;
  const T* a = A + b * n * n;
  long long acc[kStamps] = {};
  long long t = clock64();
  const auto mark = [&](int phase) {
    const long long now = clock64();
    acc[phase] += now - t;
    t = now;
  };
  if (kSkip & kNoDiag) {  // what the panel solve reads: L_kk = I
    for (int e = threadIdx.x; e < kTileElems; e += NT) sm.col[e] = e % (kTile + 1) == 0;
  }
  if (kSkip & kNoMemory) {  // block-diagonal: n on the diagonal, 0.5 elsewhere in its tiles
    for (int e = threadIdx.x; e < tile_count(nt) * kTileElems; e += NT) {
      const int tile = e / kTileElems, r = (e % kTileElems) / kTile, c = e % kTile;
      int I = 0;
      while ((I + 1) * (I + 2) / 2 <= tile) ++I;
      const bool diag_tile = tile == I * (I + 1) / 2 + I;
      sm.s[tile * kTileElems + tile_off<T>(r, c)] = !diag_tile ? T(0) : r == c ? T(n) : T(0.5);
    }
  } else {
    tile_stage_in<T, NT>(sm.s, a, n, nt, false);
  }
  __syncthreads();  // tile (0, 0) staged for warp 0, as tile_potrf.cu's kernels do
  const TileSegmentOut<T> out{L + b * n * n, sm.s, n, nt, false};
  const int warp = threadIdx.x / 32;
  for (int k = 0; k < nt; ++k) {
    if (warp == 0) {
      if (!(kSkip & kNoDiag)) tile_factor_diag(tile_at(sm.s, k, k), sm.col, sm.cb);
    } else if (k > 0) {
      if (!(kSkip & kNoMemory)) out.segment(k - 1, threadIdx.x - kTile, NT - kTile);
      if (kSkip & kLookahead) {  // step k - 1's update of tile columns k + 1 ..
        const int m = nt - 1 - k;
        for (int l = warp - 1; l < m * (m + 1) / 2; l += NT / 32 - 1) {
          int ti, tj;
          tri_index(l, ti, tj);
          tile_update_one<T, kMma>(sm.s, k + 1 + ti, k + 1 + tj, k - 1);
        }
      }
    }
    if (k == 0) {
      cp_async_wait<0>();
      __syncthreads();
      mark(kAtStage);  // includes the first diagonal tile, which overlaps the stage-in
    } else {
      __syncthreads();
      mark(kAtDiag);
    }
    if (k + 1 < nt) {
      if (!(kSkip & kNoPanel)) tile_solve_panel(sm.s, nt, k, sm.col);
      __syncthreads();
      mark(kAtPanel);
      if (kSkip & kLookahead) {  // tile column k + 1 only
        for (int I = k + 1 + warp; I < nt; I += NT / 32) tile_update_one<T, kMma>(sm.s, I, k + 1, k);
      } else if (!(kSkip & kNoUpdate)) {
        tile_update_trailing<T, kMma>(sm.s, nt, k);
      }
      __syncthreads();
      mark(kAtUpdate);
    }
  }
  if (!(kSkip & kNoMemory)) out.segment(nt - 1, threadIdx.x, NT);
  __syncthreads();
  mark(kAtOut);
  if (threadIdx.x == 0)
    for (int p = 0; p < kStamps; ++p) stamps[b * kStamps + p] = acc[p];
}

// Median of five timed launches after two warm-ups (ms).
template <typename Launch>
float median_ms(const Launch& launch) {
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  std::vector<float> ms;
  for (int r = 0; r < 7; ++r) {
    CHECK(cudaEventRecord(e0));
    launch();
    CHECK(cudaEventRecord(e1));
    CHECK(cudaEventSynchronize(e1));
    float m;
    CHECK(cudaEventElapsedTime(&m, e0, e1));
    if (r >= 2) ms.push_back(m);
  }
  CHECK(cudaGetLastError());
  CHECK(cudaEventDestroy(e0));
  CHECK(cudaEventDestroy(e1));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// n on the diagonal, entries in [-0.5, 0.5) elsewhere (positive definite by diagonal
// dominance); block_diagonal: zero outside the 32 x 32 diagonal tiles.
template <typename T>
void make_spd(std::vector<T>& A, int n, int batch, bool block_diagonal = false) {
  unsigned s = 12345;
  const auto rnd = [&] { return T((s = s * 1664525u + 1013904223u) >> 8) / T(1 << 24) - T(0.5); };
  for (int b = 0; b < batch; ++b) {
    T* m = A.data() + size_t(b) * n * n;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j <= i; ++j) {
        const T v = i == j ? T(n) : rnd();
        m[i * n + j] = m[j * n + i] = block_diagonal && i / kTile != j / kTile ? T(0) : v;
      }
  }
}

// ||A - L L^T||_max / n for matrix 0.
template <typename T>
double residual(const std::vector<T>& A, const std::vector<T>& L, int n) {
  double worst = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) {
      double s = 0;
      for (int p = 0; p <= j; ++p) s += double(L[i * n + p]) * double(L[j * n + p]);
      worst = std::max(worst, std::fabs(s - double(A[i * n + j])));
    }
  return worst / n;
}

template <typename T, int NT, bool kMma, int kSkip>
void run_variant(const char* name, const T* dA, T* dL, int n, int batch, long long* dstamps,
                 int clock_khz, int sms) {
  auto kernel = probe_kernel<T, NT, kMma, kSkip>;
  const size_t smem = tile_smem_bytes(n, sizeof(T));
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, NT, smem));
  const float med = median_ms([&] { kernel<<<batch, NT, smem>>>(dA, dL, n, dstamps); });
  std::vector<long long> st(size_t(batch) * kStamps);
  CHECK(cudaMemcpy(st.data(), dstamps, st.size() * sizeof(long long), cudaMemcpyDeviceToHost));
  double mean[kStamps] = {};
  for (int b = 0; b < batch; ++b)
    for (int p = 0; p < kStamps; ++p) mean[p] += double(st[size_t(b) * kStamps + p]) / batch;
  double total = 0;
  for (double m : mean) total += m;
  // SM cycles per matrix: the kernel's time over the matrices each SM factors.
  const double per_matrix = double(med) * clock_khz / (double(batch) / sms);
  std::printf("  %-10s %8.3f ms  %6.0f cyc/matrix/SM  block %6.0f cyc:", name, med, per_matrix,
              total);
  const char* names[kStamps] = {"stage+d0", "diag", "panel", "update", "out"};
  for (int p = 0; p < kStamps; ++p) std::printf(" %s %5.1f%%", names[p], 100 * mean[p] / total);
  std::printf("  (%d blocks/SM)\n", per_sm);
}

// The residual of matrix 0 and a hash of every factor's bytes (same hash, same bits).
template <typename T>
void check_factor(const char* name, const std::vector<T>& A, const T* dL, int n) {
  std::vector<T> L(A.size());
  CHECK(cudaMemcpy(L.data(), dL, L.size() * sizeof(T), cudaMemcpyDeviceToHost));
  unsigned long long h = 1469598103934665603ull;  // FNV-1a
  for (const unsigned char *p = reinterpret_cast<const unsigned char*>(L.data()),
                            *e = p + L.size() * sizeof(T);
       p != e; ++p)
    h = (h ^ *p) * 1099511628211ull;
  std::printf("  %s: max |A - L L^T| / n = %.2e, output hash %016llx\n", name, residual(A, L, n),
              h);
}

template <typename T, int NT, bool kMma>
void probe_case(int n, int batch, int clock_khz, int sms, bool full_only) {
  std::printf("%s n = %d, batch %d, %d threads, %s update\n",
              sizeof(T) == 8 ? "float64" : "float32", n, batch, NT, kMma ? "MMA" : "FMA");
  std::vector<T> A(size_t(batch) * n * n), B(A.size());
  make_spd(A, n, batch);
  if (!full_only) make_spd(B, n, batch, true);
  T *dA, *dB, *dL;
  long long* dstamps;
  CHECK(cudaMalloc(&dA, A.size() * sizeof(T)));
  CHECK(cudaMalloc(&dB, B.size() * sizeof(T)));
  CHECK(cudaMalloc(&dL, A.size() * sizeof(T)));
  CHECK(cudaMalloc(&dstamps, size_t(batch) * kStamps * sizeof(long long)));
  CHECK(cudaMemcpy(dA, A.data(), A.size() * sizeof(T), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dB, B.data(), B.size() * sizeof(T), cudaMemcpyHostToDevice));
  run_variant<T, NT, kMma, kNone>("full", dA, dL, n, batch, dstamps, clock_khz, sms);
  check_factor("full", A, dL, n);
  if (full_only) {
    CHECK(cudaFree(dA));
    CHECK(cudaFree(dB));
    CHECK(cudaFree(dL));
    CHECK(cudaFree(dstamps));
    return;
  }
  run_variant<T, NT, kMma, kLookahead>("lookahead", dA, dL, n, batch, dstamps, clock_khz, sms);
  check_factor("lookahead", A, dL, n);
  std::printf(" block-diagonal matrices:\n");
  run_variant<T, NT, kMma, kNone>("full", dB, dL, n, batch, dstamps, clock_khz, sms);
  check_factor("full", B, dL, n);
  run_variant<T, NT, kMma, kNoDiag>("no-diag", dB, dL, n, batch, dstamps, clock_khz, sms);
  run_variant<T, NT, kMma, kNoPanel>("no-panel", dB, dL, n, batch, dstamps, clock_khz, sms);
  run_variant<T, NT, kMma, kNoUpdate>("no-update", dB, dL, n, batch, dstamps, clock_khz, sms);
  run_variant<T, NT, kMma, kNoMemory>("no-memory", dB, dL, n, batch, dstamps, clock_khz, sms);
  run_variant<T, NT, kMma, kNoDiag | kNoPanel | kNoUpdate>("memory", dB, dL, n, batch, dstamps,
                                                           clock_khz, sms);
  CHECK(cudaFree(dA));
  CHECK(cudaFree(dB));
  CHECK(cudaFree(dL));
  CHECK(cudaFree(dstamps));
}

// potrf_rows_chain on one 32 x 32 matrix per warp, reps times (each one's input depends
// on the last one's output), 128 registers as in the tile kernels.
template <typename T>
__global__ void __launch_bounds__(128, 4) chain_kernel(const T* A, T* out, int reps) {
  __shared__ __align__(16) T cb[4 * kChainBuf];
  const int warp = threadIdx.x / 32, lane = threadIdx.x & 31;
  const T* a0 = A + (blockIdx.x % 64) * kTileElems;
  T acc = 0;
  for (int r = 0; r < reps; ++r) {
    T a[kTile];
#pragma unroll
    for (int j = 0; j < kTile; ++j) a[j] = (j <= lane ? a0[lane * kTile + j] : T(0)) + acc * T(1e-30);
    T rdiag;
    const int info = potrf_rows_chain(a, cb + warp * kChainBuf, rdiag);
    acc = rdiag + T(info);
#pragma unroll
    for (int j = 0; j < kTile; ++j) acc += j <= lane ? a[j] : T(0);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

template <typename T>
void chain_case(int sms, int clock_khz) {
  std::vector<T> A(64 * kTileElems);
  make_spd(A, kTile, 64);
  T *dA, *dout;
  CHECK(cudaMalloc(&dA, A.size() * sizeof(T)));
  CHECK(cudaMalloc(&dout, size_t(sms) * 128 * sizeof(T)));
  CHECK(cudaMemcpy(dA, A.data(), A.size() * sizeof(T), cudaMemcpyHostToDevice));
  const int reps = 400;
  for (int warps : {1, 4}) {
    const float ms = median_ms([&] { chain_kernel<T><<<sms, 32 * warps>>>(dA, dout, reps); });
    const double cyc = double(ms) * clock_khz / reps;
    std::printf("%s pivot chain, %d warp(s) per SM: %.0f cycles a tile (%.0f a step)\n",
                sizeof(T) == 8 ? "float64" : "float32", warps, cyc, cyc / kTile);
  }
  CHECK(cudaFree(dA));
  CHECK(cudaFree(dout));
}

int main(int argc, char** argv) {
  const bool warps = argc > 1 && std::strcmp(argv[1], "warps") == 0;
  const bool full_only = warps || (argc > 1 && std::strcmp(argv[1], "full") == 0);
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  int clock_khz = 0;
  CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  std::printf("%s, %d SMs, %d MHz\n", prop.name, prop.multiProcessorCount, clock_khz / 1000);
  const int sms = prop.multiProcessorCount;
  if (warps) {  // four-warp blocks against eight where a third block then fits an SM
    for (int r = 0; r < 2; ++r) {
      probe_case<double, 256, true>(96, 10000, clock_khz, sms, true);
      probe_case<double, 128, true>(96, 10000, clock_khz, sms, true);
      probe_case<double, 256, true>(80, 10000, clock_khz, sms, true);
      probe_case<double, 128, true>(80, 10000, clock_khz, sms, true);
      probe_case<float, 256, false>(160, 10000, clock_khz, sms, true);
      probe_case<float, 128, false>(160, 10000, clock_khz, sms, true);
      probe_case<float, 256, false>(144, 10000, clock_khz, sms, true);
      probe_case<float, 128, false>(144, 10000, clock_khz, sms, true);
    }
    return 0;
  }
  probe_case<double, 128, true>(96, 10000, clock_khz, sms, full_only);  // tile4's order
  probe_case<double, 256, true>(128, 10000, clock_khz, sms, full_only);
  probe_case<double, 512, true>(160, 10000, clock_khz, sms, full_only);
  probe_case<float, 256, false>(192, 10000, clock_khz, sms, full_only);
  probe_case<float, 512, false>(256, 10000, clock_khz, sms, full_only);
  if (full_only) return 0;
  chain_case<double>(sms, clock_khz);
  chain_case<float>(sms, clock_khz);
  return 0;
}
