"""PyTorch's own OpInfo sample inputs for its Cholesky and triangular-solve ops,
fed through torch_batchchol and compared with torch (reference in float64)."""

import pytest
import torch
from torch.testing._internal.common_methods_invocations import op_db

import torch_batchchol as bc
from conftest import DTYPES, assert_close_rel, cond2, to_ref, tol

OPINFOS = {op.name: op for op in op_db if op.name in (
    "linalg.cholesky", "linalg.cholesky_ex", "cholesky_solve", "linalg.solve_triangular")}


def test_opinfos_present():
    assert set(OPINFOS) == {"linalg.cholesky", "linalg.cholesky_ex", "cholesky_solve",
                            "linalg.solve_triangular"}


def _samples(name, device, dtype, requires_grad=False):
    op = OPINFOS[name]
    if dtype not in op.supported_dtypes(device):
        pytest.skip(f"{name} does not support {dtype} on {device}")
    samples = list(op.sample_inputs(device, dtype, requires_grad=requires_grad))
    assert samples, name
    return op, samples


def _compare(ours, theirs, bound, what, dtype):
    assert ours.shape == theirs.shape, (what, ours.shape, theirs.shape)
    assert ours.dtype == dtype, what
    assert_close_rel(ours, theirs, bound, what)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["linalg.cholesky", "linalg.cholesky_ex"])
def test_cholesky_samples(device, dtype, name):
    op, samples = _samples(name, device, dtype)
    for s in samples:
        A, upper = s.input, s.kwargs.get("upper", False)
        n = A.shape[-1]
        ref = torch.linalg.cholesky(to_ref(A), upper=upper)
        bound = tol(dtype, n, cond2(A))
        if name == "linalg.cholesky":
            _compare(bc.cholesky(A, *s.args, **s.kwargs), ref, bound, f"{s}", dtype)
        else:
            L, info = bc.cholesky_ex(A, *s.args, **s.kwargs)
            _, tinfo = op(A, *s.args, **s.kwargs)
            _compare(L, ref, bound, f"{s}", dtype)
            assert torch.equal(info.cpu(), tinfo.cpu().to(torch.int32))
        # torch itself within the same bound: the bound is not vacuous for this data.
        assert_close_rel(op(A, *s.args, **s.kwargs) if name == "linalg.cholesky"
                         else op(A, *s.args, **s.kwargs)[0], ref, bound, "torch itself")


@pytest.mark.parametrize("dtype", DTYPES)
def test_cholesky_solve_samples(device, dtype):
    op, samples = _samples("cholesky_solve", device, dtype)
    for s in samples:
        B, L = s.input, s.args[0]
        upper = s.kwargs.get("upper", False)
        # torch.cholesky_solve reads only L's triangle (the sample passes a full
        # positive-definite matrix as L), as potrs does.
        Lt = to_ref(L).triu() if upper else to_ref(L).tril()
        A = Lt.mH @ Lt if upper else Lt @ Lt.mH
        ref = torch.cholesky_solve(to_ref(B), Lt, upper=upper)
        ours = bc.cholesky_solve(B, L, **s.kwargs)
        _compare(ours, ref, tol(dtype, L.shape[-1], cond2(A)), f"{s}", dtype)
        assert ours.shape == op(B, L, **s.kwargs).shape


@pytest.mark.parametrize("dtype", DTYPES)
def test_solve_triangular_samples(device, dtype):
    op, samples = _samples("linalg.solve_triangular", device, dtype)
    for s in samples:
        A, B = s.input, s.args[0]
        ref = torch.linalg.solve_triangular(to_ref(A), to_ref(B), **s.kwargs)
        ours = bc.solve_triangular(A, B, **s.kwargs)
        unit = s.kwargs.get("unitriangular", False)
        T = to_ref(A)
        if unit:
            T = T.clone()
            torch.diagonal(T, dim1=-2, dim2=-1).fill_(1)
        # The samples are random triangular matrices, sometimes badly conditioned,
        # which the bound accounts for.
        _compare(ours, ref, tol(dtype, A.shape[-1], cond2(T)), f"{s}", dtype)
        assert ours.shape == op(A, B, **s.kwargs).shape


@pytest.mark.parametrize("name", ["linalg.cholesky", "cholesky_solve", "linalg.solve_triangular"])
def test_samples_with_requires_grad(name):
    # The requires_grad samples: gradients of ours agree with torch's, through the
    # OpInfo's own gradcheck wrapper where it has one.
    op, samples = _samples(name, "cpu", torch.float64, requires_grad=True)
    wrapper = op.gradcheck_wrapper
    ours_fn = {"linalg.cholesky": bc.cholesky, "cholesky_solve": bc.cholesky_solve,
               "linalg.solve_triangular": bc.solve_triangular}[name]
    for s in samples:
        inputs = [t for t in (s.input, *s.args) if isinstance(t, torch.Tensor) and t.requires_grad]
        if any(t.numel() == 0 for t in (s.input, *s.args) if isinstance(t, torch.Tensor)):
            continue
        theirs_out = wrapper(op, s.input, *s.args, **s.kwargs)
        ours_out = wrapper(ours_fn, s.input, *s.args, **s.kwargs)
        G = torch.randn_like(theirs_out)
        g_theirs = torch.autograd.grad(theirs_out, inputs, G, allow_unused=True)
        g_ours = torch.autograd.grad(ours_out, inputs, G, allow_unused=True)
        for a, b in zip(g_ours, g_theirs):
            assert (a is None) == (b is None)
            if a is not None:
                torch.testing.assert_close(a, b, rtol=1e-7, atol=1e-7)
