"""The torch_batchchol.linalg functions for strided nested tensors of matrices.

Each nested tensor is mapped onto a ragged batch (values + sizes + offsets, from
its own host metadata, so no extra host sync), solved with the *_vbatched ops, and
the result viewed as a nested tensor with the layout of the input. Autograd flows
through (values() and the buffer view are differentiable).
"""

import torch
from torch import Tensor

from . import ragged

_ops = torch.ops.batchchol


def _require_nested(B: Tensor, api: str, name: str) -> None:
    if not B.is_nested:
        raise TypeError(f"{api}: {name} must be a nested tensor when A is one")


def _max_n(n: Tensor) -> int:
    return int(n.max()) if n.numel() else 0


def cholesky_ex(A: Tensor, upper: bool, api: str):
    r, layout = ragged.nested_matrices(A, api)
    L, info = _ops.potrf_vbatched(r.values, r.n, r.offsets, _max_n(r.n), upper)
    return ragged.to_nested(L, layout), info


def cholesky_solve(B: Tensor, L: Tensor, upper: bool, api: str) -> Tensor:
    _require_nested(B, api, "B")
    r, _ = ragged.nested_matrices(L, api)
    bv, boff, k, b_layout = ragged.nested_rhs(B, r.n, api)
    X = _ops.potrs_vbatched(r.values, r.n, r.offsets, bv, boff, k, _max_n(r.n), upper)
    return ragged.to_nested(X, b_layout)


def solve(A: Tensor, B: Tensor, upper: bool, left: bool, api: str):
    """Returns (X, info)."""
    _require_nested(B, api, "B")
    if not left:
        raise NotImplementedError(f"{api}: left=False is not supported for nested tensors")
    r, _ = ragged.nested_matrices(A, api)
    bv, boff, k, b_layout = ragged.nested_rhs(B, r.n, api)
    X, _, info = _ops.posv_vbatched(r.values, r.n, r.offsets, bv, boff, k, _max_n(r.n), upper)
    return ragged.to_nested(X, b_layout), info


def solve_triangular(A: Tensor, B: Tensor, upper: bool, left: bool, unit: bool, api: str):
    _require_nested(B, api, "B")
    r, _ = ragged.nested_matrices(A, api)
    if left:
        bv, boff, k, b_layout = ragged.nested_rhs(B, r.n, api)
    else:
        # Right solves: block i is k x n_i; its columns must match matrix i.
        Bc = B.contiguous()
        sizes = Bc._nested_tensor_size()
        if sizes.dim() != 2 or sizes.shape[1] != 2 or sizes.shape[0] != r.n.shape[0]:
            raise ValueError(f"{api}: expected right-hand sides [k, n_i], one per matrix")
        if not torch.equal(sizes[:, 1], r.n):
            i = int((sizes[:, 1] != r.n).nonzero()[0, 0])
            raise ValueError(f"{api}: right-hand side {i} has {int(sizes[i, 1])} columns, "
                             f"but matrix {i} is {int(r.n[i])} x {int(r.n[i])}")
        ks = sizes[:, 0].unique()
        if ks.numel() > 1:
            raise ValueError(f"{api}: the right-hand sides have different row counts {ks.tolist()}")
        k = int(ks[0]) if ks.numel() else 0
        b_layout = ragged._NestedLayout(sizes, Bc._nested_tensor_strides(),
                                        Bc._nested_tensor_storage_offsets())
        bv, boff = Bc.values(), b_layout.offsets
    X = _ops.trsm_vbatched(r.values, r.n, r.offsets, bv, boff, k, _max_n(r.n), upper, left,
                           False, unit)
    return ragged.to_nested(X, b_layout)
