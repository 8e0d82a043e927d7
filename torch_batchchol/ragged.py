"""Ragged (variable-size) batches: packing helpers, the vbatched ops, and the
adapters for nested tensors.

A ragged batch of matrices is ``values`` (1-D; matrix i is row-major n_i x n_i,
contiguous, from ``offsets[i]``), ``n`` (int32/int64, one size per matrix) and
``offsets`` (int64). Right-hand sides are a ragged batch of n_i x k blocks with
their own offsets (k shared). Metadata on the CPU is validated on the host (bad
entries raise ValueError); metadata on the GPU is validated on the GPU without a
host sync (see ``potrf_vbatched``). Passing ``max_n`` (the largest size) spares
the one host read of max(n) that GPU-side metadata would otherwise need, and makes
the ops safe under CUDA-graph capture.
"""

from typing import List, NamedTuple, Optional, Sequence, Tuple

import torch
from torch import Tensor

from . import _library  # noqa: F401  (registers torch.ops.batchchol)

_ops = torch.ops.batchchol


class Ragged(NamedTuple):
    """A ragged batch: flat ``values``, per-matrix sizes ``n`` and ``offsets``."""

    values: Tensor
    n: Tensor
    offsets: Tensor


def _exclusive_cumsum(counts: Tensor) -> Tensor:
    out = torch.zeros_like(counts)
    if counts.numel() > 1:
        out[1:] = counts[:-1].cumsum(0)
    return out


def pack(matrices: Sequence[Tensor]) -> Ragged:
    """Packs square matrices (any sizes, one dtype and device) into a ragged batch.

    ``n`` and ``offsets`` stay on the CPU (host metadata); ``values`` is on the
    matrices' device. Differentiable with respect to the matrices.
    """
    if len(matrices) == 0:
        raise ValueError("torch_batchchol.ragged.pack: expected at least one matrix")
    for i, m in enumerate(matrices):
        if m.dim() != 2 or m.shape[0] != m.shape[1]:
            raise ValueError(
                f"torch_batchchol.ragged.pack: matrix {i} has shape {tuple(m.shape)}, "
                "expected a square matrix [n, n]"
            )
    n = torch.tensor([m.shape[0] for m in matrices], dtype=torch.int64)
    values = torch.cat([m.reshape(-1) for m in matrices])
    return Ragged(values, n, _exclusive_cumsum(n * n))


def pack_rhs(blocks: Sequence[Tensor], n: Tensor) -> Tuple[Tensor, Tensor, int]:
    """Packs right-hand sides (block i: [n_i, k], or a vector [n_i] for k = 1).

    Returns (values, b_offsets, k); ``n`` are the matrices' sizes.
    """
    sizes = n.tolist()
    if len(blocks) != len(sizes):
        raise ValueError(
            f"torch_batchchol.ragged.pack_rhs: {len(blocks)} blocks for {len(sizes)} matrices"
        )
    for i, (b, s) in enumerate(zip(blocks, sizes)):
        if b.dim() not in (1, 2) or b.shape[0] != s:
            raise ValueError(
                f"torch_batchchol.ragged.pack_rhs: block {i} has shape {tuple(b.shape)}, "
                f"expected [{s}, k] or [{s}]"
            )
    ks = {1 if b.dim() == 1 else b.shape[-1] for b in blocks}
    if len(ks) > 1:
        raise ValueError(
            f"torch_batchchol.ragged.pack_rhs: the blocks have different column counts {sorted(ks)}"
        )
    k = ks.pop() if ks else 0
    values = torch.cat([b.reshape(-1) for b in blocks])
    return values, _exclusive_cumsum(torch.as_tensor(sizes, dtype=torch.int64) * k), k


def unpack(values: Tensor, n: Tensor, offsets: Tensor, cols: Optional[int] = None) -> List[Tensor]:
    """Views of the blocks of a ragged buffer: [n_i, n_i], or [n_i, cols]."""
    out = []
    for s, o in zip(n.tolist(), offsets.tolist()):
        c = s if cols is None else cols
        out.append(values[o : o + s * c].view(s, c))
    return out


# ---------------------------------------------------------------------------
# The vbatched ops (torch.ops.batchchol.*_vbatched), with keyword defaults.


def potrf_vbatched(A, n, offsets, *, max_n=None, upper=False) -> Tuple[Tensor, Tensor]:
    """Cholesky factors of a ragged batch: (L_values, info).

    info[i] = 0 on success, k > 0 when the leading minor of order k of matrix i is
    not positive definite (NaN/Inf included), and < 0 when matrix i's GPU-side
    metadata is invalid (-1 negative size, -2 size above max_n, -3 out of the
    buffer, -4 overlapping another matrix, -5/-6 the same for its right-hand side).
    """
    return _ops.potrf_vbatched(A, n, offsets, max_n, upper)


def potrs_vbatched(L, n, offsets, B, b_offsets, k, *, max_n=None, upper=False) -> Tensor:
    return _ops.potrs_vbatched(L, n, offsets, B, b_offsets, k, max_n, upper)


def posv_vbatched(A, n, offsets, B, b_offsets, k, *, max_n=None, upper=False):
    return _ops.posv_vbatched(A, n, offsets, B, b_offsets, k, max_n, upper)


def trsm_vbatched(
    A, n, offsets, B, b_offsets, k, *, max_n=None, upper=False, left=True,
    transpose=False, unit_diagonal=False,
) -> Tensor:
    return _ops.trsm_vbatched(
        A, n, offsets, B, b_offsets, k, max_n, upper, left, transpose, unit_diagonal
    )


# ---------------------------------------------------------------------------
# Strided nested tensors (torch.nested.nested_tensor([...])): host metadata.


class _NestedLayout(NamedTuple):
    sizes: Tensor  # [count, dims] int64, CPU
    strides: Tensor
    offsets: Tensor  # storage offsets, int64, CPU


def nested_matrices(A: Tensor, api: str) -> Tuple[Ragged, _NestedLayout]:
    """The ragged batch behind a strided nested tensor of square matrices."""
    if A.layout != torch.strided:
        raise TypeError(
            f"{api}: nested tensors of layout {A.layout} are not supported here; "
            "for jagged tensors use torch_batchchol.ragged.cholesky_jagged / solve_jagged"
        )
    A = A.contiguous()
    sizes = A._nested_tensor_size()
    if sizes.dim() != 2 or sizes.shape[1] != 2:
        raise ValueError(f"{api}: expected a nested tensor of matrices [n_i, n_i]")
    bad = (sizes[:, 0] != sizes[:, 1]).nonzero()
    if bad.numel():
        i = int(bad[0, 0])
        raise ValueError(
            f"{api}: expected square matrices, but component {i} has shape {tuple(sizes[i].tolist())}"
        )
    layout = _NestedLayout(sizes, A._nested_tensor_strides(), A._nested_tensor_storage_offsets())
    return Ragged(A.values(), sizes[:, 0].clone(), layout.offsets), layout


def nested_rhs(B: Tensor, n: Tensor, api: str) -> Tuple[Tensor, Tensor, int, _NestedLayout]:
    """Values, offsets and k of a strided nested tensor of right-hand sides."""
    if not B.is_nested or B.layout != torch.strided:
        raise TypeError(f"{api}: expected B as a strided nested tensor like A")
    B = B.contiguous()
    sizes = B._nested_tensor_size()
    if sizes.shape[0] != n.shape[0]:
        raise ValueError(f"{api}: {sizes.shape[0]} right-hand sides for {n.shape[0]} matrices")
    if sizes.dim() != 2 or sizes.shape[1] not in (1, 2):
        raise ValueError(f"{api}: expected right-hand sides [n_i, k] or [n_i]")
    if not torch.equal(sizes[:, 0], n):
        i = int((sizes[:, 0] != n).nonzero()[0, 0])
        raise ValueError(
            f"{api}: right-hand side {i} has {int(sizes[i, 0])} rows, but matrix {i} is "
            f"{int(n[i])} x {int(n[i])}"
        )
    if sizes.shape[1] == 2:
        ks = sizes[:, 1].unique()
        if ks.numel() > 1:
            raise ValueError(f"{api}: the right-hand sides have different column counts {ks.tolist()}")
        k = int(ks[0]) if ks.numel() else 0
    else:
        k = 1
    layout = _NestedLayout(sizes, B._nested_tensor_strides(), B._nested_tensor_storage_offsets())
    return B.values(), layout.offsets, k, layout


def to_nested(values: Tensor, layout: _NestedLayout) -> Tensor:
    """A nested tensor viewing `values` with the layout of another one (differentiable)."""
    return torch._nested_view_from_buffer(values, layout.sizes, layout.strides, layout.offsets)


# ---------------------------------------------------------------------------
# Jagged nested tensors (layout=torch.jagged): one ragged dimension, so a matrix is
# a component of n_i^2 values, a right-hand side a component [n_i, k]. These work
# under torch.compile(fullgraph=True).


def from_jagged(A: Tensor, n: Tensor) -> Ragged:
    """The ragged batch of a jagged nested tensor whose component i holds n_i^2 values.

    With CPU tensors (outside torch.compile) the component lengths are checked against
    n here; on the GPU that check would need a host sync, so there a component longer
    than n_i^2 is read as its first n_i^2 values (one too short shows up as a block
    outside the buffer or overlapping the next one).
    """
    if not A.is_nested or A.layout != torch.jagged or A.dim() != 2:
        raise TypeError(
            "torch_batchchol.ragged.from_jagged: expected a jagged nested tensor of shape "
            "[count, j] (component i: the n_i * n_i values of matrix i, row-major)"
        )
    offsets = A.offsets()
    if offsets.device.type == "cpu" and n.device.type == "cpu" and not torch.compiler.is_compiling():
        lengths = offsets.diff()
        bad = (lengths != n.to(lengths.dtype) ** 2).nonzero()
        if bad.numel():
            i = int(bad[0, 0])
            raise ValueError(
                f"torch_batchchol.ragged.from_jagged: component {i} holds {int(lengths[i])} "
                f"values, but n[{i}] = {int(n[i])} needs {int(n[i]) ** 2}"
            )
    return Ragged(A.values(), n, offsets[:-1])


def to_jagged(values: Tensor, like: Tensor) -> Tensor:
    """A jagged nested tensor with `values` and the components of `like`."""
    return torch.nested.nested_tensor_from_jagged(values, like.offsets())


def cholesky_jagged(A: Tensor, n: Tensor, *, upper: bool = False, max_n: Optional[int] = None):
    """(L, info) for a jagged batch of matrices (see from_jagged); L is jagged like A."""
    r = from_jagged(A, n)
    L, info = _ops.potrf_vbatched(r.values, r.n, r.offsets, max_n, upper)
    return to_jagged(L, A), info


def solve_jagged(
    A: Tensor, n: Tensor, B: Tensor, *, upper: bool = False, max_n: Optional[int] = None
) -> Tensor:
    """X with A_i X_i = B_i (A_i Hermitian positive definite) for jagged A (as in
    from_jagged) and B of shape [count, j, k] (component i: n_i x k). No host sync
    with max_n; a failed factorization leaves NaN/Inf in its X_i."""
    if not B.is_nested or B.layout != torch.jagged or B.dim() != 3:
        raise TypeError(
            "torch_batchchol.ragged.solve_jagged: expected B as a jagged nested tensor "
            "[count, j, k] (component i: n_i x k)"
        )
    r = from_jagged(A, n)
    k = B.shape[-1]
    bv = B.values()
    X, _, _ = _ops.posv_vbatched(
        r.values, r.n, r.offsets, bv.reshape(-1), B.offsets()[:-1] * k, k, max_n, upper
    )
    return torch.nested.nested_tensor_from_jagged(X.view(bv.shape), B.offsets())
