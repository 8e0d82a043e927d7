// Standalone probe behind prefetch_ahead (csrc/cpu/vec_ops.h): one-column forward
// substitutions over a batch of n x n upper-triangular row-major factors (what a
// column-major lower factor from cholesky_ex is, read in place), one system at a time
// as trsm_cpu runs them, without and with software prefetches a fixed distance ahead of
// the row being read, on one and two OpenMP threads. Median of 25 passes per variant.
//
//   g++ -O3 -fopenmp tools/cpu_trsv_stream_probe.cpp -o /tmp/probe && /tmp/probe [n] [batch]
#include <emmintrin.h>
#include <omp.h>
#include <xmmintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

using T = double;

// Locality 3 / 1 / 0 (the _MM_HINT_T0 / T1 / NTA of __builtin_prefetch); -1: none.
template <int kLocality, int kAhead>
void prefetch_row(const T* row, long n) {
  if constexpr (kLocality >= 0) {
    const char* p = reinterpret_cast<const char*>(row) + kAhead;
    const char* end = reinterpret_cast<const char*>(row + n) + kAhead;
    for (; p < end; p += 64) __builtin_prefetch(p, 0, kLocality);
  }
}

template <int kLocality, int kAhead>
void solve(const T* c, T* x, long n) {
  for (long i = 0; i < n; ++i) {
    prefetch_row<kLocality, kAhead>(c + i * n, n);
    x[i] /= c[i * n + i];
    const T xi = x[i];
    for (long p = i + 1; p < n; ++p) x[p] -= xi * c[i * n + p];
  }
}

template <int kLocality, int kAhead>
double median_ms(const T* C, const T* B, T* X, long batch, long n, int threads) {
  std::vector<double> ts;
  for (int r = 0; r < 25; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for num_threads(threads) schedule(static)
    for (long s = 0; s < batch; ++s) {
      std::memcpy(X + s * n, B + s * n, n * sizeof(T));
      solve<kLocality, kAhead>(C + s * n * n, X + s * n, n);
    }
    ts.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ts.begin(), ts.end());
  return ts[ts.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 32, batch = argc > 2 ? std::atol(argv[2]) : 10000;
  // 64 bytes past a page boundary, as torch's large CPU allocations come.
  T* C = static_cast<T*>(std::aligned_alloc(4096, batch * n * n * sizeof(T) + 4096)) + 8;
  std::vector<T> B(batch * n, 1.0), X(batch * n);
  for (long s = 0; s < batch; ++s)
    for (long i = 0; i < n; ++i)
      for (long j = 0; j < n; ++j)
        C[(s * n + i) * n + j] = j < i ? 0.0 : i == j ? 2.0 : 0.01 * ((i * 7 + j * 3) % 11);
  std::printf("n = %ld, %ld systems, float64; ms (median of 25)\n", n, batch);
  for (int threads : {1, 1, 1, 2, 2, 2}) {
    std::printf("threads %d: none %.2f  T0/1K %.2f  T1/1K %.2f  NTA/1K %.2f  T0/2K %.2f\n", threads,
                median_ms<-1, 0>(C, B.data(), X.data(), batch, n, threads),
                median_ms<3, 1024>(C, B.data(), X.data(), batch, n, threads),
                median_ms<1, 1024>(C, B.data(), X.data(), batch, n, threads),
                median_ms<0, 1024>(C, B.data(), X.data(), batch, n, threads),
                median_ms<3, 2048>(C, B.data(), X.data(), batch, n, threads));
  }
  std::free(C - 8);
  return 0;
}
