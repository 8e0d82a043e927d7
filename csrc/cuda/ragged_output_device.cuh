// The zeros of a ragged output outside its blocks, one thread per block: the device
// routine of ragged_output_cuda.cu's gap kernel and of the fused prologue's check phase
// (ragged_prologue_device.cuh). The factorization kernels write every element of each
// valid block, so only what lies outside the blocks needs zeros. With the blocks in
// offset order and short gaps between them (what packing produces), each block's
// thread zeroes the gap up to the next block; any other layout makes the caller clear
// the whole buffer instead.
#pragma once

#include <cstdint>

namespace batchchol {
namespace cuda {

// Longest gap one thread zeroes by itself; a longer one (a buffer with room to spare
// after its blocks, say) makes the caller clear the whole buffer.
constexpr int64_t kMaxSerialGap = 1024;

// Zeroes the gap after block b of an output of numel elements (and, for block 0, the one
// before it) and returns true; returns false, writing nothing, where the caller must clear
// the whole buffer: block b invalid (code != 0), out of offset order with block b - 1,
// overlapping the next block, a gap longer than kMaxSerialGap, or a next offset past the
// buffer (an invalid next block's). code may be the one from before the overlap check
// (the fused prologue's): blocks that all pass are disjoint, so an overlap among them is
// never found later. n: block b's order (its extent n^2 elements). An
// element is `words` consecutive W's of out (so that one routine serves every dtype as
// 32-bit words).
template <typename W>
__device__ __forceinline__ bool zero_gap_after(W* __restrict__ out, int64_t numel, int words,
                                               const int64_t* __restrict__ offsets, int64_t n,
                                               int32_t code, int64_t b, int64_t count) {
  if (code != 0) return false;
  const int64_t start = offsets[b];
  const int64_t end = start + n * n;
  const int64_t next = b + 1 < count ? offsets[b + 1] : numel;
  if (next < end || next > numel || (b > 0 && start < offsets[b - 1]) ||
      next - end > kMaxSerialGap || (b == 0 && start > kMaxSerialGap))
    return false;
  for (int64_t e = end * words; e < next * words; ++e) out[e] = W(0);
  if (b == 0)
    for (int64_t e = 0; e < start * words; ++e) out[e] = W(0);
  return true;
}

}  // namespace cuda
}  // namespace batchchol
