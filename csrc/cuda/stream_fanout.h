// Independent launches of one op spread over a few streams, so that they overlap.
//
// The ragged potrf splits a batch by size into launches that touch disjoint matrices
// (the warp family's order classes, the wide and tile groups, the lazy blocked steps).
// On one stream each waits for the previous one's tail, and the small ones leave most
// of the GPU idle while they run. StreamFanout forks the current stream into `width`
// streams (the current one and width - 1 from PyTorch's pool) with an event, and its
// destructor joins them back with one event each, so that the work queued on the
// current stream afterwards, and the caller's, starts after every launch. Event
// record / wait pairs are what CUDA-graph capture turns into edges, so the ops stay
// capturable. Tensors used by the launches are allocated on the current stream and
// freed after the join is queued, so the caching allocator's reuse stays ordered.
#pragma once

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <vector>

namespace batchchol {
namespace cuda {

// The streams of a fanout: launch i goes to s[i % n]; s[0] is the caller's stream.
struct LaunchStreams {
  static constexpr int kMax = 4;
  std::array<cudaStream_t, kMax> s{};
  int n = 1;
  cudaStream_t operator[](int i) const { return s[i % n]; }
  // Launch i of a sequence ordered by expected length: the first (the longest pole)
  // alone on the caller's stream, the others round the remaining streams.
  cudaStream_t pole_first(int i) const { return i == 0 || n == 1 ? s[0] : s[1 + (i - 1) % (n - 1)]; }
};

inline LaunchStreams single_stream(cudaStream_t stream) {
  LaunchStreams ls;
  ls.s[0] = stream;
  return ls;
}

// Streams for the independent launches of the ragged ops: BATCHCHOL_RAGGED_STREAMS
// (1..LaunchStreams::kMax, a tuning switch read at every call) or `fallback`.
inline int ragged_stream_width(int fallback) {
  int w = fallback;
  if (const char* env = std::getenv("BATCHCHOL_RAGGED_STREAMS")) w = std::atoi(env);
  return std::clamp(w, 1, LaunchStreams::kMax);
}

namespace detail {
// Events for the fork and the joins, created once per device and host thread: an
// event is reusable as soon as the wait on its record has been queued.
inline cudaEvent_t fanout_event(int device, int slot) {
  constexpr int kSlots = LaunchStreams::kMax;
  thread_local std::vector<std::array<cudaEvent_t, kSlots>> events;
  if (device >= static_cast<int>(events.size())) events.resize(device + 1, {});
  cudaEvent_t& e = events[device][slot];
  if (e == nullptr) C10_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  return e;
}
}  // namespace detail

class StreamFanout {
 public:
  explicit StreamFanout(int width) {
    const c10::cuda::CUDAStream main = at::cuda::getCurrentCUDAStream();
    device_ = main.device_index();
    streams_.s[0] = main.stream();
    streams_.n = std::clamp(width, 1, LaunchStreams::kMax);
    if (streams_.n == 1) return;
    const cudaEvent_t fork = detail::fanout_event(device_, 0);
    C10_CUDA_CHECK(cudaEventRecord(fork, streams_.s[0]));
    for (int i = 1; i < streams_.n; ++i) {
      streams_.s[i] = at::cuda::getStreamFromPool(false, device_).stream();
      C10_CUDA_CHECK(cudaStreamWaitEvent(streams_.s[i], fork, 0));
    }
  }
  StreamFanout(const StreamFanout&) = delete;
  StreamFanout& operator=(const StreamFanout&) = delete;
  ~StreamFanout() {
    for (int i = 1; i < streams_.n; ++i) {
      const cudaEvent_t join = detail::fanout_event(device_, i);
      C10_CUDA_CHECK_WARN(cudaEventRecord(join, streams_.s[i]));
      C10_CUDA_CHECK_WARN(cudaStreamWaitEvent(streams_.s[0], join, 0));
    }
  }
  const LaunchStreams& streams() const { return streams_; }

 private:
  LaunchStreams streams_;
  int device_ = 0;
};

}  // namespace cuda
}  // namespace batchchol
