// Ragged (variable-size) batches, the input of the *_vbatched ops.
//
// A ragged operand is a 1-D `values` tensor and an int64 `offsets` tensor: block i is
// stored row-major and contiguous from values[offsets[i]]. Its shape comes from the
// batch's sizes n (int32 or int64, one per matrix) and the op: n_i x n_i for the
// matrices, n_i x k (or k x n_i for right-side trsm) for right-hand sides. Elements of
// `values` outside every block are never read, and are zero in the outputs.
//
// Metadata on the host (sizes and offsets on the CPU) is validated there: bad entries
// raise ValueError naming the matrix. Metadata on the GPU is validated on the GPU,
// without a host sync: each matrix gets a status (0 = valid, < 0 = the reason below),
// kernels skip invalid matrices, and the ops report the status (potrf's info) or fill
// the affected result with NaN. Either way no kernel touches memory outside a buffer.
#pragma once

#include <ATen/ATen.h>
#include <c10/util/Optional.h>

#include <initializer_list>

namespace batchchol {

constexpr const char* kPotrfV = "batchchol.potrf_vbatched";
constexpr const char* kPotrsV = "batchchol.potrs_vbatched";
constexpr const char* kPosvV = "batchchol.posv_vbatched";
constexpr const char* kTrsmV = "batchchol.trsm_vbatched";

// Largest size the ops accept: n^2 and n * k (k < 2^31) stay far from int64 overflow,
// and kernel arithmetic on sizes stays within int.
constexpr int64_t kMaxSize = (int64_t(1) << 30) - 1;

// Status codes of a matrix whose metadata is invalid (potrf's info for it).
enum RaggedStatus : int32_t {
  kNegativeSize = -1,
  kSizeAboveMaxN = -2,
  kMatrixOutOfRange = -3,
  kMatrixOverlap = -4,
  kRhsOutOfRange = -5,
  kRhsOverlap = -6,
};

// Shape of the blocks of one operand: each of rows / cols is kSizeN (the matrix's n)
// or a fixed count (k).
constexpr int64_t kSizeN = -1;
struct BlockShape {
  int64_t rows = kSizeN;
  int64_t cols = kSizeN;
};

// Blocks of a right-hand side with k columns (k = -1: n_i), of a left solve
// (n_i x k) or a right one (k x n_i).
inline BlockShape rhs_block_shape(int64_t k, bool left) {
  const int64_t c = k < 0 ? kSizeN : k;
  return left ? BlockShape{kSizeN, c} : BlockShape{c, kSizeN};
}

// Argument checks that need no data (dtype, dimensions, devices); shared with the
// Meta kernels. values: 1-D float/complex; sizes: 1-D int32/int64; offsets: 1-D int64
// of the same length; both on the CPU or on the values' device.
void check_ragged_matrices(const char* op, const char* name, const at::Tensor& values,
                           const at::Tensor& sizes, const at::Tensor& offsets);
// A right-hand-side operand of a batch checked with check_ragged_matrices.
void check_ragged_rhs(const char* op, const at::Tensor& A_values, const at::Tensor& sizes,
                      const char* name, const at::Tensor& values, const at::Tensor& offsets,
                      int64_t k);

// Validated metadata of a ragged batch, on the values' device.
struct RaggedBatch {
  int64_t count = 0;
  int64_t max_n = 0;
  at::Tensor sizes;      // int32 [count]
  at::Tensor offsets;    // int64 [count], the matrices'
  at::Tensor b_offsets;  // int64 [count], the right-hand sides' (undefined without them)
  at::Tensor status;     // int32 [count], RaggedStatus or 0; undefined when host-checked
  at::Tensor rhs_status; // int32 [count], the right-hand-side block's own status
  bool host_checked = false;
};

// Raises ValueError unless 0 <= max_n <= kMaxSize.
void check_ragged_max_n(const char* op, int64_t max_n);

// Validates the metadata (raising on the host, or building `status` on the device)
// and moves it to the values' device. `rhs` (optional) is the right-hand side's
// values, offsets and block shape.
struct RaggedRhs {
  const at::Tensor& values;
  const at::Tensor& offsets;
  BlockShape shape;
};
RaggedBatch prepare_ragged(const char* op, const at::Tensor& values, const at::Tensor& sizes,
                           const at::Tensor& offsets, c10::optional<int64_t> max_n,
                           const RaggedRhs* rhs = nullptr);

// Every check of a solve op (matrices A named a_name, right-hand sides B of k columns,
// for a left or right solve) followed by prepare_ragged: the shared prologue of the
// potrs / posv / trsm _vbatched kernels of every backend.
RaggedBatch prepare_ragged_solve(const char* op, const char* a_name, const at::Tensor& A,
                                 const at::Tensor& sizes, const at::Tensor& offsets,
                                 const at::Tensor& B, const at::Tensor& b_offsets, int64_t k,
                                 c10::optional<int64_t> max_n, bool left);

// For the private helper ops: one operand's blocks (written: an output, which must not
// overlap another block).
struct BlockOperand {
  const at::Tensor& offsets;
  BlockShape shape;
  int64_t numel;
  bool written;
};
struct HelperBlocks {
  at::Tensor status;  // int32 [count] on the sizes' device: 0 or a RaggedStatus
  at::Tensor sizes;   // int32 [count], clamped to [0, max_n]
};
// Status of block i over all operands: its size (negative, above max_n), each
// operand's block within its buffer, output blocks not overlapping. Raises
// ValueError instead when all the metadata is on the host.
HelperBlocks helper_block_status(const char* op, const at::Tensor& n,
                                 c10::optional<int64_t> max_n,
                                 std::initializer_list<BlockOperand> operands);

}  // namespace batchchol
