// The row-packed lower triangle: row r starts at lo_row(r) (rows 0..r-1 hold r (r + 1) / 2
// entries), entry (r, c), c <= r, is at lo_row(r) + c, and a triangle of order n takes
// lo_row(n). The packed stage of the register families (stage_copy.cuh) and the staged
// factor of the block-per-system solves (trsm_block_device.cuh) use it.
// The row-packed upper triangle of order N: row r holds columns r..N-1 and starts at
// up_row<N>(r) (the packed triangles of the block-per-system and column-per-lane solves).
#pragma once

namespace batchchol {
namespace cuda {

__host__ __device__ constexpr int lo_row(int r) { return r * (r + 1) / 2; }

template <int N>
__host__ __device__ constexpr int up_row(int r) {
  return r * N - r * (r - 1) / 2;
}

}  // namespace cuda
}  // namespace batchchol
