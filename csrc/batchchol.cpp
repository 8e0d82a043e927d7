// Every schema of the batchchol library lives here, so that the operator set is
// visible in one place; kernels register themselves next to their code.
#include <torch/library.h>

TORCH_LIBRARY(batchchol, m) {
  m.def("potrf(Tensor A, bool upper=False) -> (Tensor L, Tensor info)");
  m.def("potrs(Tensor L, Tensor B, bool upper=False) -> Tensor X");
  m.def("posv(Tensor A, Tensor B, bool upper=False) -> (Tensor X, Tensor L, Tensor info)");
  m.def(
      "trsm(Tensor A, Tensor B, bool upper=False, bool left=True, bool transpose=False, "
      "bool unit_diagonal=False) -> Tensor X");
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
