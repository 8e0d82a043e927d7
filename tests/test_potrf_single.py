"""CUDA only: potrf of a single large matrix, which goes to cuSOLVER's dense potrf
(csrc/cuda/potrf_single.cu) unless BATCHCHOL_POTRF_SINGLE=0; both routes must give the
same contract: the factor, info (NaN and Inf pivots included), a non-finite failed
factor, no host sync."""

import pytest
import torch

from conftest import (
    HAS_CUDA,
    check_single_matrix_info,
    cuda_kernel_names,
    fill_other_triangle,
    make_spd,
    ops,
)
from test_cuda_graph import sync_debug_error
from test_potrf import check_factor

pytestmark = [pytest.mark.cuda, pytest.mark.skipif(not HAS_CUDA, reason="no CUDA")]

DTYPES = [torch.float32, torch.float64, torch.complex64, torch.complex128]
# float64 and complex take the blocked family from 161 / 33 (float64 129..160 the tile
# family, yet routed like blocked's orders), float32 from 321; the route starts at 128.
ROUTED_N = 385


@pytest.fixture(params=["1", "0"], ids=["cusolver", "ours"])
def route(request, monkeypatch):
    monkeypatch.setenv("BATCHCHOL_POTRF_SINGLE", request.param)
    return request.param == "1"


def ours_ran(fn):
    """Whether the library's own kernels factored (the blocked family, or the tile family
    at float64 129..160) rather than cuSOLVER."""
    return any("blocked_" in name or "potrf_tile_kernel" in name for name in cuda_kernel_names(fn))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [129, ROUTED_N])
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("shape", [(1,), ()], ids=["batch1", "matrix"])
def test_single_matrix_factor(route, dtype, n, upper, shape):
    A = make_spd(shape, n, dtype, "cuda", cond=100.0)
    # The route reads only its triangle too, and ignores a complex diagonal's imaginary part.
    A_in = fill_other_triangle(A, upper)
    if dtype.is_complex:
        A_in.diagonal(dim1=-2, dim2=-1).imag.fill_(0.5)
    L, info = ops.potrf(A_in, upper)
    check_factor(A, L, info, upper, cond=100.0)
    if dtype == torch.float32 and n <= 320:
        return  # the tile family's order: no route
    assert ours_ran(lambda: ops.potrf(A, upper)) != route


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64])
def test_route_only_for_one_matrix(monkeypatch, dtype):
    # Two matrices, or an order below the route's, keep the library's kernels.
    monkeypatch.setenv("BATCHCHOL_POTRF_SINGLE", "1")
    A = make_spd((2,), ROUTED_N, dtype, "cuda")
    assert ours_ran(lambda: ops.potrf(A, False))
    if dtype == torch.complex64:
        small = make_spd((1,), 100, dtype, "cuda")
        assert ours_ran(lambda: ops.potrf(small, False))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["minor", "diag-nan", "diag-inf", "offdiag-nan"])
@pytest.mark.parametrize("where", [0, 200, ROUTED_N - 1])
@pytest.mark.parametrize("upper", [False, True])
def test_single_matrix_info(route, dtype, kind, where, upper):
    check_single_matrix_info(ROUTED_N, dtype, "cuda", kind, where, upper)


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex64])
def test_single_matrix_no_host_sync(route, dtype):
    A = make_spd((1,), ROUTED_N, dtype, "cuda")
    A[0, 7, 7] = float("nan")
    ops.potrf(A, False)  # warm-up: cuSOLVER's handle and workspace
    with sync_debug_error():
        L, info = ops.potrf(A, False)
    assert info.tolist() == [8]
