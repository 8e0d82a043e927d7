// Device-side validation of the operands of a ragged batch (ragged_status_cuda.cu), for
// metadata that lives on a CUDA device. Plain C++ header: ragged.cpp calls it in CUDA
// builds.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

namespace batchchol {
namespace cuda {

// Most blocks served: past it, a batch whose blocks are out of offset order would make
// the pairwise overlap check quadratic, and ragged.cpp sorts instead.
constexpr int64_t kRaggedFastStatusMax = int64_t(1) << 16;

// One operand of a ragged batch: blocks of rows x cols (kSizeN meaning n_i) at offsets
// (int64, on the device) in a buffer of numel elements, and the codes of its failures.
struct StatusOperand {
  const at::Tensor& offsets;
  int64_t rows, cols, numel;
  int32_t range_code, overlap_code;
};

// Status of every block of operand a (and of b), as the tensor version in ragged.cpp
// computes it, int32 on the sizes' device: kNegativeSize / kSizeAboveMaxN from the size
// (limit = max_n), else the operand's range_code when the block is not inside
// [0, numel), else its overlap_code when it starts before a live block that comes
// earlier in offset order ends, else 0. Also the sizes clamped to [0, limit] (int32) and,
// with b, `merged`: a's code where it is non-zero, else b's. sizes: int32 or int64 on the
// device. No host sync; two launches on the current stream, one allocation.
struct BlockStatus {
  at::Tensor status, b_status, clamped, merged;
};
BlockStatus block_status_cuda(const at::Tensor& sizes, int64_t limit, const StatusOperand& a,
                              const StatusOperand* b = nullptr);

namespace status_device {

// The status kernels' arguments (ragged_status_device.cuh), plain data: the fused
// prologue's (ragged_prologue.h) travel with its result to the launch that runs them.
// One operand: its blocks are rows x cols (kSizeN: n_i) at off[i] in a buffer of numel.
struct OperandArgs {
  const int64_t* off;
  int64_t rows, cols, numel;
  int32_t range_code, overlap_code;
  int32_t* status;
  int32_t* flags;  // one word per thread block
};

// The operands of one call (the matrices, and the right-hand sides when there are two),
// checked in the same two launches: a solve's prologue would otherwise cost four.
struct StatusArgs {
  int64_t count, limit;
  int ops;  // 1 or 2
  OperandArgs op[2];
  int32_t* clamped;  // the sizes clamped to [0, limit]
  int32_t* merged;   // ops == 2: op[0]'s code where it is non-zero, else op[1]'s
};

}  // namespace status_device

}  // namespace cuda
}  // namespace batchchol
