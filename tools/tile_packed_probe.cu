// Four-warp tile blocks (tile4) on the packed stage (tile_packed.cuh), against the builds
// the library runs, on a GPU, without building the extension (it needs torch's headers
// only). The packed stage holds two tiles fewer, so at some orders another block fits an
// SM's shared memory, if the registers allow it: each variant is built for a block count
// (__launch_bounds__' second argument) and prints the registers, stack and blocks per SM
// it got. The kernel is the library's (tile_factor.cuh's potrf_tile_kernel). Every
// variant factors the same matrices; its factor is compared bit for bit with the first
// variant's of the same update form (the stages run the same operations on every entry).
//
//   nvcc -O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr -Icsrc $(python3 -c 'import
//     torch.utils.cpp_extension as c; print(" ".join("-I" + p for p in c.include_paths()))')
//     tools/tile_packed_probe.cu -o /tmp/probe
//   /tmp/probe f64 128    (float64 97..128: 8-warp unpacked, tile4 packed for 3 and 4,
//                          tile4 unpacked for 3; the FMA update: 8-warp unpacked, tile4 packed)
//   /tmp/probe f64 96     (float64 65..96: tile4 unpacked, tile4 packed for 3, 4 and 5)
//   /tmp/probe f32 128    (float32 97..128: tile4 unpacked and packed, built for 7 and 6)
// (orders 65..128 only).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cuda/tile_factor.cuh"
#include "cuda/tile_stage.cuh"
#include "probe_check.h"

using namespace batchchol::cuda;

template <typename T>
struct Probe {
  int n;
  int64_t batch;
  std::vector<T> host;
  T* A = nullptr;
  T* L = nullptr;
  int* info = nullptr;
  std::vector<T> first[2];  // the first factor of each update form (FMA, MMA)

  Probe(int n_, int64_t batch_) : n(n_), batch(batch_), host(size_t(batch_) * n_ * n_) {
    uint64_t s = 12345;
    const auto rnd = [&]() {
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      return double((s >> 11) & ((1ULL << 53) - 1)) / double(1ULL << 53) - 0.5;
    };
    const int64_t nn = int64_t(n) * n;
    for (int64_t m = 0; m < batch; ++m) {
      T* a = host.data() + m * nn;
      for (int i = 0; i < n; ++i)
        for (int j = 0; j <= i; ++j) a[i * n + j] = a[j * n + i] = T(i == j ? n + rnd() : rnd());
    }
    CHECK(cudaMalloc(&A, host.size() * sizeof(T)));
    CHECK(cudaMalloc(&L, host.size() * sizeof(T)));
    CHECK(cudaMalloc(&info, batch * sizeof(int)));
    CHECK(cudaMemcpy(A, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  }

  template <int NT, bool kMma, bool kPacked, int kMinBlocks>
  void run(const char* name) {
    auto kernel = potrf_tile_kernel<T, NT, kMma, kPacked, kMinBlocks>;
    const size_t smem = tile_smem_bytes(n, sizeof(T), kPacked);
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    int per_sm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, NT, smem));
    cudaFuncAttributes fa;
    CHECK(cudaFuncGetAttributes(&fa, kernel));
    const int nt = (n + kTile - 1) / kTile;
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    // Poisoned before the runs, so that a variant that leaves entries unwritten differs.
    CHECK(cudaMemset(L, 0xFF, host.size() * sizeof(T)));
    CHECK(cudaMemset(info, 0xFF, batch * sizeof(int)));
    std::vector<float> t;
    for (int r = 0; r < 23; ++r) {
      CHECK(cudaEventRecord(e0));
      kernel<<<unsigned(batch), NT, smem>>>(A, L, info, n, nt, false);
      CHECK(cudaEventRecord(e1));
      CHECK(cudaEventSynchronize(e1));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, e0, e1));
      if (r >= 3) t.push_back(ms);  // three warm-up launches
    }
    CHECK(cudaGetLastError());
    std::sort(t.begin(), t.end());
    std::vector<T> out(host.size());
    CHECK(cudaMemcpy(out.data(), L, out.size() * sizeof(T), cudaMemcpyDeviceToHost));
    std::vector<int> inf(batch);
    CHECK(cudaMemcpy(inf.data(), info, batch * sizeof(int), cudaMemcpyDeviceToHost));
    const bool all_ok = std::all_of(inf.begin(), inf.end(), [](int i) { return i == 0; });
    // The MMA update rounds otherwise than the FMA one: each is compared with its own.
    std::vector<T>& ref = first[kMma];
    const char* same = "reference";
    if (ref.empty()) {
      ref = out;
    } else {
      same = std::memcmp(ref.data(), out.data(), out.size() * sizeof(T)) == 0 ? "same bits"
                                                                              : "DIFFERENT BITS";
    }
    std::printf("  %-34s %3d threads, %3d regs, %3zu B stack, %d blocks/SM, smem %6zu: %.4f ms, "
                "%s%s\n", name, NT, fa.numRegs, size_t(fa.localSizeBytes), per_sm, smem,
                t[t.size() / 2], same, all_ok ? "" : ", NONZERO INFO");
  }

  // max |A - L L^T| over matrix 0, from the first variant's factor.
  double residual() const {
    const std::vector<T>& f = first[0].empty() ? first[1] : first[0];
    double r = 0;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j <= i; ++j) {
        double acc = -double(host[i * n + j]);
        for (int q = 0; q <= j; ++q) acc += double(f[i * n + q]) * double(f[j * n + q]);
        r = std::max(r, std::abs(acc));
      }
    return r;
  }
};

int main(int argc, char** argv) {
  const bool f64 = argc < 2 || std::strcmp(argv[1], "f32") != 0;
  const int n = argc > 2 ? std::atoi(argv[2]) : 128;
  const int64_t batch = 10000;
  // The variants' orders: four-warp packed blocks need nt <= 5 (tile_potrf_packed's last
  // warp free of panel rows at step 1), the 8-warp unpacked stage fits float64 to 128.
  if (n < 65 || n > 128) {
    std::fprintf(stderr, "n must be in 65..128\n");
    return 2;
  }
  std::printf("%s n = %d, batch %lld, median of 20 launches\n", f64 ? "float64" : "float32", n,
              (long long)batch);
  double res = 0;
  if (f64) {
    Probe<double> p(n, batch);
    for (int round = 0; round < 2; ++round) {  // twice: the times should repeat
      if (n > 96) {
        p.run<256, true, false, 2>("tile, 8 warps unpacked, for 2");
        p.run<128, true, true, 3>("tile4 packed, for 3");
        p.run<128, true, true, 4>("tile4 packed, for 4");
        p.run<128, true, false, 3>("tile4 unpacked, for 3");
        p.run<256, false, false, 2>("tile, FMA update, for 2");
        p.run<128, false, true, 3>("tile4 packed, FMA update, for 3");
      } else {
        p.run<128, true, false, 4>("tile4 unpacked, for 4");
        p.run<128, true, true, 3>("tile4 packed, for 3");
        p.run<128, true, true, 4>("tile4 packed, for 4");
        p.run<128, true, true, 5>("tile4 packed, for 5");
      }
    }
    res = p.residual();
  } else {
    Probe<float> p(n, batch);
    for (int round = 0; round < 2; ++round) {
      p.run<128, false, false, 7>("tile4 unpacked, for 7");
      p.run<128, false, true, 7>("tile4 packed, for 7");
      p.run<128, false, true, 6>("tile4 packed, for 6");
    }
    res = p.residual();
  }
  std::printf("  max |A - L L^T| (matrix 0): %.3e\n", res);
  return 0;
}
