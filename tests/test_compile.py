"""torch.compile(fullgraph=True) of code calling all four ops, static and dynamic."""

import pytest
import torch
import torch._dynamo.testing

import torch_batchchol as bc
from conftest import assert_close_rel, cond2, make_rhs, make_spd, ops, tol


def all_ops(A, B):
    L, info = ops.potrf(A, False)
    X1 = ops.potrs(L, B, False)
    X2, L2, info2 = ops.posv(A, B, True)
    X4, info4 = ops.posv_solve(A, B, False)
    # Y = L^{-1} B, then L^{-H} Y: the same solve as potrs through two trsm calls.
    Y = ops.trsm(L, B, False, True, False, False)
    X3 = ops.trsm(L, Y, False, True, True, False)
    return X1, X2, X3, X4, L, L2, info + info2 + info4


def api(A, B):
    L, info = bc.cholesky_ex(A)
    X = bc.cholesky_solve(B, L)
    Z = bc.solve_triangular(L, B, upper=False)
    W = bc.solve(A, B, upper=True)
    return X, Z, W, info


def _inputs(device, dtype, batch, n, k):
    return make_spd(batch, n, dtype, device), make_rhs(batch + (n, k), dtype, device)


def _check(outs, expected, A):
    n = A.shape[-1]
    bound = tol(A.dtype, n, cond2(A))
    for i, (o, e) in enumerate(zip(outs, expected)):
        assert o.shape == e.shape and o.dtype == e.dtype, i
        if o.dtype == torch.int32:
            assert torch.equal(o, e), i
        else:
            assert_close_rel(o, e, bound, f"compiled output {i}")


def _compiled(fn, backend, dynamic):
    torch._dynamo.reset()
    counter = torch._dynamo.testing.CompileCounterWithBackend(backend)
    return torch.compile(fn, backend=counter, fullgraph=True, dynamic=dynamic), counter


@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.complex128])
def test_compile_all_ops_inductor(device, dynamic, dtype):
    fn, counter = _compiled(all_ops, "inductor", dynamic)
    A, B = _inputs(device, dtype, (3,), 5, 2)
    _check(fn(A, B), all_ops(A, B), A)
    assert counter.frame_count == 1


@pytest.mark.parametrize("fn", [all_ops, api], ids=["ops", "api"])
@pytest.mark.parametrize("dynamic", [False, True])
def test_compile_aot_eager(device, fn, dynamic):
    compiled, counter = _compiled(fn, "aot_eager", dynamic)
    for batch, n, k in [((3,), 5, 2), ((4,), 7, 3)]:
        A, B = _inputs(device, torch.float64, batch, n, k)
        _check(compiled(A, B), fn(A, B), A)
    # dynamic=True must trace once for both shapes; static shapes trace twice.
    assert counter.frame_count == (1 if dynamic else 2)


def test_compile_dynamic_shapes_are_symbolic(device):
    # Shapes marked dynamic must flow through the Meta kernels as SymInts.
    compiled, counter = _compiled(all_ops, "aot_eager", None)
    A, B = _inputs(device, torch.float64, (3,), 4, 2)
    for t in (A, B):
        torch._dynamo.mark_dynamic(t, 0)
    _check(compiled(A, B), all_ops(A, B), A)
    A, B = _inputs(device, torch.float64, (6,), 4, 2)
    _check(compiled(A, B), all_ops(A, B), A)
    assert counter.frame_count == 1


@pytest.mark.parametrize("dynamic", [False, True])
def test_compile_backward(device, dynamic):
    # Training-style use: the compiled graph includes the autograd formulas.
    def loss(Y, B):
        n = Y.shape[-1]
        A = Y @ Y.mH + n * torch.eye(n, dtype=Y.dtype, device=Y.device)
        X1, X2, X3, X4, L, L2, _ = all_ops(A, B)
        return (X1.abs() ** 2).sum() + X2.sum() + X3.sum() + X4.sum() + L.sum() + L2.sum()

    compiled, _ = _compiled(loss, "aot_eager", dynamic)
    Y0 = torch.randn(2, 4, 4, dtype=torch.float64, device=device)
    B0 = make_rhs((2, 4, 3), torch.float64, device)
    Y, B = Y0.clone().requires_grad_(), B0.clone().requires_grad_()
    compiled(Y, B).backward()
    Ye, Be = Y0.clone().requires_grad_(), B0.clone().requires_grad_()
    loss(Ye, Be).backward()
    torch.testing.assert_close(Y.grad, Ye.grad, rtol=1e-9, atol=1e-9)
    torch.testing.assert_close(B.grad, Be.grad, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_compile_cholesky_failure_is_not_silent(device, backend):
    # Under compile the raise happens in the batchchol::_check_info op, inside the
    # graph: the same LinAlgError as in eager, and no device-side assert that would
    # leave a CUDA context unusable.
    compiled, _ = _compiled(bc.cholesky, backend, False)
    A = make_spd((2,), 3, torch.float64, device)
    torch.testing.assert_close(compiled(A), bc.cholesky(A))
    A[1] = -A[1]
    with pytest.raises(torch.linalg.LinAlgError, match=r"\(Batch element 1\).*order 1"):
        compiled(A)


@pytest.mark.parametrize("dynamic", [False, True])
def test_compile_failures_match_eager(device, dynamic):
    # info (and the NaN/Inf of failed matrices) must survive compilation unchanged.
    compiled, _ = _compiled(all_ops, "aot_eager", dynamic)
    A, B = _inputs(device, torch.float64, (3,), 5, 2)
    A[1] = -A[1]
    A[2, 3, 3] = float("nan")
    outs, expected = compiled(A, B), all_ops(A, B)
    # info of potrf (lower) + posv (upper) + posv_solve (lower).
    assert outs[6].tolist() == [0, 3, 12]
    for i, (o, e) in enumerate(zip(outs, expected)):
        torch.testing.assert_close(o, e, equal_nan=True, msg=lambda m: f"output {i}: {m}")
