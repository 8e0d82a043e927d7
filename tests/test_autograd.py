"""Autograd: gradcheck / gradgradcheck in float64 and complex128 for every op and
every tensor input, and agreement with torch.linalg's autograd.

potrf and posv read one triangle of a Hermitian A; like torch's own OpInfo tests
(gradcheck_wrapper_hermitian_input) they are differentiated through a Hermitian
parametrisation, so that the check does not depend on how the gradient is split
between the two triangles. trsm and potrs reading one triangle of a triangular
input are checked through A.tril()/triu() for potrs (torch.cholesky_solve does not
mask its gradient) and directly for trsm (torch.linalg.solve_triangular does).
"""

import itertools

import pytest
import torch
from torch.autograd import gradcheck, gradgradcheck

from conftest import RUN_SLOW, make_rhs, make_spd, make_tri, ops

GRAD_DTYPES = [torch.float64, torch.complex128]
N = 3
# Fast mode checks a random projection of the Jacobian (cheap, still catches wrong
# formulas with probability ~1); the full Jacobian runs with BATCHCHOL_RUN_SLOW=1.
FAST = not RUN_SLOW


def check_grads(f, inputs):
    assert gradcheck(f, inputs, fast_mode=FAST)
    assert gradgradcheck(f, inputs, fast_mode=FAST)


def hpd(X):
    n = X.shape[-1]
    return X @ X.mH + n * torch.eye(n, dtype=X.dtype)


def leaf(t):
    return t.detach().clone().requires_grad_(True)


def assert_grads_close(ours, theirs, what):
    for i, (g1, g2) in enumerate(zip(ours, theirs)):
        assert g1 is not None, f"{what}: no gradient for input {i}"
        torch.testing.assert_close(g1, g2, rtol=1e-10, atol=1e-10, msg=lambda m: f"{what} input {i}: {m}")


def grads(out, inputs, cotangents):
    return torch.autograd.grad(out, inputs, cotangents, allow_unused=True)


# --------------------------------------------------------------------- potrf


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
@pytest.mark.parametrize("upper", [False, True])
def test_potrf_gradcheck(dtype, upper):
    X = leaf(torch.randn(2, N, N, dtype=dtype))

    def f(X):
        return ops.potrf(hpd(X), upper)[0]

    check_grads(f, (X,))


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
@pytest.mark.parametrize("upper", [False, True])
def test_potrf_grad_matches_torch(dtype, upper):
    # The input gradient itself (not through a parametrisation) must be torch's
    # symmetric gradient. For complex input torch's gradient carries an extra
    # anti-Hermitian part (imaginary diagonal terms, a direction Hermitian inputs
    # cannot move in, and one LAPACK ignores); there the Hermitian parts must agree
    # and ours must be Hermitian.
    A = leaf(make_spd((2,), 4, dtype))
    G = torch.randn(2, 4, 4, dtype=dtype)
    L, info = ops.potrf(A, upper)
    assert not info.requires_grad
    (ours,) = grads(L, A, G)
    (theirs,) = grads(torch.linalg.cholesky(A, upper=upper), A, G)
    torch.testing.assert_close(ours, ours.mH, msg="potrf gradient is not Hermitian")
    if dtype.is_complex:
        ours, theirs = (ours + ours.mH) / 2, (theirs + theirs.mH) / 2
    assert_grads_close([ours], [theirs], "potrf dA")


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
def test_potrf_double_backward_matches_torch(dtype):
    X = leaf(torch.randn(2, N, N, dtype=dtype))
    G = torch.randn(2, N, N, dtype=dtype)
    (g1,) = torch.autograd.grad(ops.potrf(hpd(X), False)[0], X, G, create_graph=True)
    (g2,) = torch.autograd.grad(torch.linalg.cholesky(hpd(X)), X, G, create_graph=True)
    V = torch.randn_like(X)
    (h1,) = torch.autograd.grad(g1, X, V)
    (h2,) = torch.autograd.grad(g2, X, V)
    assert_grads_close([g1.detach(), h1], [g2.detach(), h2], "potrf second order")


# --------------------------------------------------------------------- potrs


def _tri_mask(L, upper):
    return L.triu() if upper else L.tril()


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("l_batch,b_batch", [((2,), (2,)), ((2, 1), (3,)), ((), (2,))], ids=str)
def test_potrs_gradcheck(dtype, upper, l_batch, b_batch):
    L = leaf(make_tri(l_batch, N, dtype, upper=upper))
    B = leaf(make_rhs(b_batch + (N, 2), dtype))

    def f(L, B):
        return ops.potrs(_tri_mask(L, upper), B, upper)

    check_grads(f, (L, B))


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
@pytest.mark.parametrize("upper", [False, True])
def test_potrs_grad_matches_torch(dtype, upper):
    L = leaf(make_tri((2,), 4, dtype, upper=upper))
    B = leaf(make_rhs((3, 1, 4, 2), dtype))
    G = torch.randn(3, 2, 4, 2, dtype=dtype)
    ours = grads(ops.potrs(_tri_mask(L, upper), B, upper), (L, B), G)
    theirs = grads(torch.cholesky_solve(B, _tri_mask(L, upper), upper=upper), (L, B), G)
    assert ours[1].shape == B.shape
    assert_grads_close(ours, theirs, "potrs")


# --------------------------------------------------------------------- posv


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("a_batch,b_batch", [((2,), (2,)), ((1,), (2,)), ((2,), ())], ids=str)
def test_posv_gradcheck(dtype, upper, a_batch, b_batch):
    X = leaf(torch.randn(*a_batch, N, N, dtype=dtype))
    B = leaf(make_rhs(b_batch + (N, 2), dtype))

    def f(X, B):
        sol, L, _ = ops.posv(hpd(X), B, upper)
        return sol, L

    check_grads(f, (X, B))


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
@pytest.mark.parametrize("upper", [False, True])
def test_posv_solve_gradcheck(dtype, upper):
    X = leaf(torch.randn(2, N, N, dtype=dtype))
    B = leaf(make_rhs((2, N, 2), dtype))

    def f(X, B):
        return ops.posv_solve(hpd(X), B, upper)[0]

    check_grads(f, (X, B))


def test_posv_solve_without_grad_records_nothing():
    A = make_spd((2,), 4, torch.float64)
    B = make_rhs((2, 4, 1), torch.float64)
    X, info = ops.posv_solve(A, B, False)
    assert X.grad_fn is None and not X.requires_grad


def _no_record_calls():
    """Each op (fixed-size and ragged) with inputs A, B that require grad: name -> call."""
    A = make_spd((2,), 4, torch.float64)
    B = make_rhs((2, 4, 2), torch.float64)
    n = torch.tensor([4, 4])
    off = torch.tensor([0, 16])
    b_off = torch.tensor([0, 8])
    Av, Bv = A.reshape(-1), B.reshape(-1)
    return {
        "potrf": (lambda a, b: ops.potrf(a, False)[0], A, B),
        "potrs": (lambda a, b: ops.potrs(a, b, False), A, B),
        "posv": (lambda a, b: ops.posv(a, b, False)[0], A, B),
        "trsm": (lambda a, b: ops.trsm(a, b, False, True, False, False), A, B),
        "potrf_vbatched": (lambda a, b: ops.potrf_vbatched(a, n, off, 4, False)[0], Av, Bv),
        "posv_vbatched": (lambda a, b: ops.posv_vbatched(a, n, off, b, b_off, 2, 4, False)[0], Av, Bv),
        "potrs_vbatched": (lambda a, b: ops.potrs_vbatched(a, n, off, b, b_off, 2, 4, False), Av, Bv),
        "trsm_vbatched": (
            lambda a, b: ops.trsm_vbatched(a, n, off, b, b_off, 2, 4, False, True, False, False),
            Av, Bv),
    }


@pytest.mark.parametrize("name", list(_no_record_calls()))
def test_no_grad_calls_record_nothing_and_agree(name):
    # Where nothing is recorded the Autograd kernels call the op directly (no Function
    # node): the same values as with grad recorded, outputs without history, under
    # no_grad and inference mode alike.
    f, A, B = _no_record_calls()[name]
    a, b = A.clone().requires_grad_(), B.clone().requires_grad_()
    with_grad = f(a, b)
    assert with_grad.grad_fn is not None
    with torch.no_grad():
        plain = f(a, b)
    assert plain.grad_fn is None and not plain.requires_grad
    with torch.inference_mode():
        inference = f(A, B)
    assert inference.is_inference()
    torch.testing.assert_close(plain, with_grad.detach(), rtol=0, atol=0)
    torch.testing.assert_close(inference, with_grad.detach(), rtol=0, atol=0)


@pytest.mark.parametrize("name", list(_no_record_calls()))
def test_forward_mode_tangent_raises(name):
    # The C++ Functions have no jvp: a tangent must raise, not be dropped, also under
    # no_grad (where nothing else would be recorded).
    import torch.autograd.forward_ad as fwAD

    f, A, B = _no_record_calls()[name]
    for grad_mode in (True, False):
        with torch.set_grad_enabled(grad_mode), fwAD.dual_level():
            dual = fwAD.make_dual(A, torch.ones_like(A))
            with pytest.raises(RuntimeError, match="jvp"):
                f(dual, B)


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
@pytest.mark.parametrize("upper", [False, True])
def test_posv_grad_matches_torch(dtype, upper):
    Y = leaf(torch.randn(2, 4, 4, dtype=dtype))
    B = leaf(make_rhs((2, 4, 3), dtype))
    GX = torch.randn(2, 4, 3, dtype=dtype)
    GL = torch.randn(2, 4, 4, dtype=dtype)
    sol, L, info = ops.posv(hpd(Y), B, upper)
    assert not info.requires_grad
    ours = grads((sol, L), (Y, B), (GX, GL))
    A = hpd(Y)
    theirs = grads((torch.linalg.solve(A, B), torch.linalg.cholesky(A, upper=upper)), (Y, B), (GX, GL))
    assert_grads_close(ours, theirs, "posv")


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
def test_posv_direct_grad_hermitian_part_matches_torch(dtype):
    # Whatever split between the triangles posv uses, its gradient must act like
    # torch.linalg.solve's on Hermitian perturbations, i.e. have the same
    # Hermitian part.
    A = leaf(make_spd((2,), 4, dtype))
    B = leaf(make_rhs((2, 4, 2), dtype))
    G = torch.randn(2, 4, 2, dtype=dtype)
    ours = grads(ops.posv(A, B, False)[0], (A, B), G)
    theirs = grads(torch.linalg.solve(A, B), (A, B), G)
    sym = lambda g: (g + g.mH) / 2  # noqa: E731
    assert_grads_close([sym(ours[0]), ours[1]], [sym(theirs[0]), theirs[1]], "posv direct")


# --------------------------------------------------------------------- trsm

FLAGS = list(itertools.product([False, True], repeat=4))


def _torch_trsm(A, B, upper, left, transpose, unit):
    if transpose:
        A, upper = A.mH, not upper
    return torch.linalg.solve_triangular(A, B, upper=upper, left=left, unitriangular=unit)


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
@pytest.mark.parametrize("upper,left,transpose,unit", FLAGS)
def test_trsm_gradcheck(dtype, upper, left, transpose, unit):
    A = leaf(make_tri((2,), N, dtype, upper=upper, unit=unit))
    B = leaf(make_rhs((2, N, 2) if left else (2, 2, N), dtype))

    def f(A, B):
        return ops.trsm(A, B, upper, left, transpose, unit)

    # Direct: entries trsm never reads must get a zero gradient.
    check_grads(f, (A, B))


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
@pytest.mark.parametrize("upper,left,transpose,unit", FLAGS)
def test_trsm_grad_matches_torch(dtype, upper, left, transpose, unit):
    A = leaf(make_tri((2,), 4, dtype, upper=upper, unit=unit))
    B = leaf(make_rhs((3, 1, 4, 2) if left else (3, 1, 2, 4), dtype))
    G = torch.randn((3, 2, 4, 2) if left else (3, 2, 2, 4), dtype=dtype)
    ours = grads(ops.trsm(A, B, upper, left, transpose, unit), (A, B), G)
    theirs = grads(_torch_trsm(A, B, upper, left, transpose, unit), (A, B), G)
    assert_grads_close(ours, theirs, "trsm")


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
def test_trsm_grad_only_one_input(dtype):
    A = leaf(make_tri((2,), N, dtype))
    B = make_rhs((2, N, 2), dtype)
    (gA,) = grads(ops.trsm(A, B, False, True, False, False), A, torch.ones(2, N, 2, dtype=dtype))
    (tA,) = grads(torch.linalg.solve_triangular(A, B, upper=False), A, torch.ones(2, N, 2, dtype=dtype))
    assert_grads_close([gA], [tA], "trsm dA only")
    A2 = make_tri((2,), N, dtype)
    B2 = leaf(make_rhs((2, N, 2), dtype))
    out = ops.trsm(A2, B2, False, True, False, False)
    assert out.requires_grad
    (gB,) = grads(out, B2, torch.ones_like(out))
    (tB,) = grads(torch.linalg.solve_triangular(A2, B2, upper=False), B2, torch.ones_like(out))
    assert_grads_close([gB], [tB], "trsm dB only")


def test_no_grad_outputs_do_not_require_grad():
    A = make_spd((2,), 3, torch.float64)
    B = make_rhs((2, 3, 1), torch.float64)
    L, info = ops.potrf(A, False)
    assert not L.requires_grad and not info.requires_grad
    with torch.no_grad():
        L, _ = ops.potrf(leaf(A), False)
    assert not L.requires_grad
    X, L, info = ops.posv(leaf(A), B, False)
    assert X.requires_grad and L.requires_grad and not info.requires_grad
