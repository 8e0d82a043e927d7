"""torch.linalg-style API over the batchchol ops.

Names, arguments and errors mirror torch.linalg: where torch.linalg raises
torch.linalg.LinAlgError, these do too. cholesky_ex, cholesky_solve and
solve_triangular never synchronize with the host; cholesky and solve read `info`
back to raise (as torch.linalg does).
"""

from typing import NamedTuple

import torch
from torch import Tensor

from . import _library  # noqa: F401  (registers torch.ops.batchchol)
from . import _nested_linalg

_ops = torch.ops.batchchol


class CholeskyEx(NamedTuple):
    L: Tensor
    info: Tensor


def _raise_if_failed(api: str, info: Tensor, what: str) -> None:
    """Raise torch.linalg.LinAlgError naming the first failed batch element."""
    # One custom op (batchchol::_check_info) does the raising, so that under
    # torch.compile the data-dependent check stays inside the graph; it is marked
    # side-effectful below so that dead-code elimination keeps it.
    _ops._check_info(info, api, what)


try:  # torch >= 2.1: keep the otherwise result-less check in compiled graphs
    from torch.fx.node import has_side_effect

    has_side_effect(_ops._check_info.default)
except ImportError:  # pragma: no cover
    pass


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False) -> CholeskyEx:
    """Cholesky factor of a batch of Hermitian positive-definite matrices, with `info`.

    Like torch.linalg.cholesky_ex: returns (L, info) with L lower (or upper)
    triangular, the other triangle zero, and info int32 of the batch shape
    (0 = success, k > 0 = the leading minor of order k is not positive-definite,
    NaN and Inf included). Only the lower (upper) triangle of A is read.
    """
    if A.is_nested:
        L, info = _nested_linalg.cholesky_ex(A, upper, "torch_batchchol.cholesky_ex")
    else:
        L, info = _ops.potrf(A, upper)
    if check_errors:
        _raise_if_failed("torch_batchchol.cholesky_ex", info, "input")
    return CholeskyEx(L, info)


def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """Like torch.linalg.cholesky: raises torch.linalg.LinAlgError on failure.

    A may also be a strided nested tensor of matrices [n_i, n_i] (every function
    of this module accepts them; the result is nested like the input).
    """
    if A.is_nested:
        L, info = _nested_linalg.cholesky_ex(A, upper, "torch_batchchol.cholesky")
    else:
        L, info = _ops.potrf(A, upper)
    _raise_if_failed("torch_batchchol.cholesky", info, "input")
    return L


def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False) -> Tensor:
    """Like torch.cholesky_solve: X with A X = B where A = L L^H (U^H U if upper)."""
    if L.is_nested:
        return _nested_linalg.cholesky_solve(B, L, upper, "torch_batchchol.cholesky_solve")
    return _ops.potrs(L, B, upper)


def _is_vector_rhs(A: Tensor, B: Tensor) -> bool:
    # torch.linalg.solve's rule for treating B as a (batch of) vector(s).
    return B.dim() == 1 or (B.dim() == A.dim() - 1 and B.shape == A.shape[:-1])


def solve(A: Tensor, B: Tensor, *, upper: bool = False, left: bool = True) -> Tensor:
    """Solve A X = B (X A = B if not left) for Hermitian positive-definite A.

    Like torch.linalg.solve, restricted to positive-definite A, which lets it use
    one fused Cholesky factor-and-solve (posv). Only the lower (upper) triangle of A
    is read. Raises torch.linalg.LinAlgError when a matrix is not positive-definite.
    """
    if A.is_nested:
        X, info = _nested_linalg.solve(A, B, upper, left, "torch_batchchol.solve")
        _raise_if_failed("torch_batchchol.solve", info, "input")
        return X
    if A.dim() < 2:
        raise ValueError(
            f"torch_batchchol.solve: expected A of shape [*, n, n], got {tuple(A.shape)}"
        )
    vector = _is_vector_rhs(A, B)
    if vector and not left:
        # torch.linalg.solve has no vector case for X A = B either.
        raise ValueError(
            "torch_batchchol.solve: left=False expects B of shape [*, k, n]; a vector "
            f"right-hand side (B of shape {tuple(B.shape)}) needs left=True"
        )
    rhs = B.unsqueeze(-1) if vector else B
    if not left:
        # X A = B  <=>  A X^H = B^H for Hermitian A.
        rhs = rhs.mH
    # posv_solve: the factor is not returned, so the fused kernels never write it.
    X, info = _ops.posv_solve(A, rhs, upper)
    _raise_if_failed("torch_batchchol.solve", info, "input")
    if not left:
        X = X.mH
    return X.squeeze(-1) if vector else X


def solve_triangular(
    A: Tensor, B: Tensor, *, upper: bool, left: bool = True, unitriangular: bool = False
) -> Tensor:
    """Like torch.linalg.solve_triangular: op(A) X = B (left) or X A = B (right)."""
    if A.is_nested:
        return _nested_linalg.solve_triangular(
            A, B, upper, left, unitriangular, "torch_batchchol.solve_triangular"
        )
    return _ops.trsm(A, B, upper, left, False, unitriangular)
