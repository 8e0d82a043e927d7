// Every schema of the batchchol library lives here, so that the operator set is
// visible in one place; kernels register themselves next to their code.
#include <torch/library.h>

TORCH_LIBRARY(batchchol, m) {
  m.def("potrf(Tensor A, bool upper=False) -> (Tensor L, Tensor info)");
  m.def("potrs(Tensor L, Tensor B, bool upper=False) -> Tensor X");
  m.def("posv(Tensor A, Tensor B, bool upper=False) -> (Tensor X, Tensor L, Tensor info)");
  // posv without the factor: where A fits on chip, A and B are read once and only X
  // (and info) written. Its gradient needs L, so the autograd kernel runs posv then.
  m.def("posv_solve(Tensor A, Tensor B, bool upper=False) -> (Tensor X, Tensor info)");
  m.def(
      "trsm(Tensor A, Tensor B, bool upper=False, bool left=True, bool transpose=False, "
      "bool unit_diagonal=False) -> Tensor X");
  // Ragged batches (common/ragged.h): matrix i is n[i] x n[i] at values[offsets[i]],
  // its right-hand side n[i] x k (k x n[i] for right-side trsm) at B[b_offsets[i]].
  m.def(
      "potrf_vbatched(Tensor A, Tensor n, Tensor offsets, int? max_n=None, bool upper=False) "
      "-> (Tensor L, Tensor info)");
  m.def(
      "potrs_vbatched(Tensor L, Tensor n, Tensor offsets, Tensor B, Tensor b_offsets, int k, "
      "int? max_n=None, bool upper=False) -> Tensor X");
  m.def(
      "posv_vbatched(Tensor A, Tensor n, Tensor offsets, Tensor B, Tensor b_offsets, int k, "
      "int? max_n=None, bool upper=False) -> (Tensor X, Tensor L, Tensor info)");
  m.def(
      "trsm_vbatched(Tensor A, Tensor n, Tensor offsets, Tensor B, Tensor b_offsets, int k, "
      "int? max_n=None, bool upper=False, bool left=True, bool transpose=False, "
      "bool unit_diagonal=False) -> Tensor X");
  // Building blocks of the vbatched autograd formulas (autograd/vbatched_formulas.h).
  // C_i = op(P_i) op(Q_i), op = conjugate transpose where asked; each dimension is n[i]
  // (-1) or a fixed count; C is written at c_offsets into a zeroed buffer of c_numel.
  m.def(
      "_gemm_vbatched(Tensor P, Tensor p_offsets, int p_rows, int p_cols, bool p_conj_trans, "
      "Tensor Q, Tensor q_offsets, int q_rows, int q_cols, bool q_conj_trans, Tensor n, "
      "Tensor c_offsets, SymInt c_numel, int? max_n=None) -> Tensor C");
  // Per-matrix triangle operations on n[i] x n[i] blocks: mode 0 keeps the lower
  // triangle, 1 keeps it with the diagonal halved (Phi), 2 takes the Hermitian part
  // (X + X^H) / 2, 3 transposes the blocks (no conjugation). Blocks with a size above
  // max_n, outside their buffer or overlapping another output block are skipped (their
  // result is 0), as the ops whose gradients these build skip such matrices.
  m.def("_tri_vbatched(Tensor X, Tensor n, Tensor offsets, int mode, int? max_n=None) -> Tensor Y");
  // The per-matrix status (ragged.h's codes) that the *_vbatched ops compute for GPU-side
  // metadata, for the matrices and their right-hand sides (n_i x k blocks); for tests.
  m.def(
      "_ragged_status(Tensor n, Tensor offsets, int numel, Tensor b_offsets, int b_numel, int k, "
      "int? max_n=None) -> (Tensor status, Tensor rhs_status)");
  // The data-free checks of the ragged ops, called by their fake kernels
  // (torch_batchchol/_fake.py, csrc/meta/meta_vbatched.cpp); op names the checked op.
  m.def(
      "_check_vbatched_args(str op, Tensor A, Tensor n, Tensor offsets, Tensor? B=None, "
      "Tensor? b_offsets=None, int k=0) -> ()");
  m.def(
      "_check_gemm_vbatched_args(Tensor P, Tensor p_offsets, int p_rows, int p_cols, "
      "bool p_conj_trans, Tensor Q, Tensor q_offsets, int q_rows, int q_cols, "
      "bool q_conj_trans, Tensor n, Tensor c_offsets) -> ()");
  m.def("_check_tri_vbatched_args(Tensor X, Tensor n, Tensor offsets, int mode) -> ()");
  // Raises torch.linalg.LinAlgError for the first failed matrix of `info` (synchronizes).
  // A custom op so that the raise stays inside one graph under torch.compile.
  m.def("_check_info(Tensor info, str api, str what) -> ()");
}

#ifdef BATCHCHOL_PYTHON_MODULE
// Importing torch_batchchol._C only has to run the static registrations above;
// the module itself is empty (the ops are reached through torch.ops.batchchol).
#include <Python.h>
extern "C" PyObject* PyInit__C(void) {
  static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "_C", nullptr, -1, nullptr};
  return PyModule_Create(&def);
}
#endif
