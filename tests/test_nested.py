"""Nested tensors through the torch.linalg-style API, jagged adapters (also under
torch.compile), the pack helpers, and autograd of the ragged ops."""

import pytest
import torch

import torch_batchchol as bc
from torch_batchchol import ragged
from conftest import DEVICE_PARAMS, assert_close_rel, make_rhs, make_spd, make_tri, ops, tol, to_ref

SIZES = [3, 1, 6, 0, 4]


def spd_list(dtype, device, sizes=SIZES):
    torch.manual_seed(0)
    return [make_spd((), s, dtype, device) for s in sizes]


@pytest.mark.parametrize("device", DEVICE_PARAMS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex128])
@pytest.mark.parametrize("upper", [False, True])
def test_nested_cholesky_and_solves(device, dtype, upper):
    mats = spd_list(dtype, device)
    A = torch.nested.nested_tensor(mats)
    L = bc.cholesky(A, upper=upper)
    L2, info = bc.cholesky_ex(A, upper=upper)
    assert L.is_nested and info.tolist() == [0] * len(SIZES)
    B = torch.nested.nested_tensor([make_rhs((s, 2), dtype, device) for s in SIZES])
    X = bc.solve(A, B, upper=upper)
    X2 = bc.cholesky_solve(B, L, upper=upper)
    T = torch.nested.nested_tensor([make_tri((), s, dtype, device, upper=upper) for s in SIZES])
    Y = bc.solve_triangular(T, B, upper=upper)
    for Ai, Li, L2i, Bi, Xi, X2i, Ti, Yi in zip(mats, L.unbind(), L2.unbind(), B.unbind(),
                                                X.unbind(), X2.unbind(), T.unbind(), Y.unbind()):
        s = Ai.shape[-1]
        assert_close_rel(Li, torch.linalg.cholesky(to_ref(Ai), upper=upper), tol(dtype, s, 10))
        torch.testing.assert_close(L2i, Li, rtol=0, atol=0)
        ref = torch.linalg.solve(to_ref(Ai), to_ref(Bi))
        assert_close_rel(Xi, ref, tol(dtype, s, 10))
        assert_close_rel(X2i, ref, tol(dtype, s, 10))
        yref = torch.linalg.solve_triangular(to_ref(Ti), to_ref(Bi), upper=upper)
        assert_close_rel(Yi, yref, tol(dtype, s, 10))


@pytest.mark.parametrize("device", DEVICE_PARAMS)
def test_nested_vector_rhs_and_right_solve(device):
    mats = spd_list(torch.float64, device)
    A = torch.nested.nested_tensor(mats)
    b = torch.nested.nested_tensor([make_rhs((s,), torch.float64, device) for s in SIZES])
    x = bc.solve(A, b)
    for Ai, bi, xi in zip(mats, b.unbind(), x.unbind()):
        assert xi.shape == bi.shape
        torch.testing.assert_close(xi, torch.linalg.solve(Ai, bi))
    T = [make_tri((), s, torch.float64, device) for s in SIZES]
    Bt = [make_rhs((3, s), torch.float64, device) for s in SIZES]
    Y = bc.solve_triangular(torch.nested.nested_tensor(T), torch.nested.nested_tensor(Bt),
                            upper=False, left=False)
    for Ti, Bi, Yi in zip(T, Bt, Y.unbind()):
        torch.testing.assert_close(Yi, torch.linalg.solve_triangular(Ti, Bi, upper=False, left=False))


@pytest.mark.parametrize("device", DEVICE_PARAMS)
def test_nested_failure_raises(device):
    mats = spd_list(torch.float64, device)
    mats[2] = mats[2].clone()
    mats[2][0, 0] = -1.0
    A = torch.nested.nested_tensor(mats)
    with pytest.raises(torch.linalg.LinAlgError, match="2"):
        bc.cholesky(A)
    assert bc.cholesky_ex(A).info.tolist() == [0, 0, 1, 0, 0]


@pytest.mark.parametrize("device", DEVICE_PARAMS)
def test_nested_bad_input(device):
    A = torch.nested.nested_tensor([torch.eye(2, device=device), torch.ones(2, 3, device=device)])
    with pytest.raises(ValueError, match="component 1 has shape"):
        bc.cholesky(A)
    good = torch.nested.nested_tensor([torch.eye(2, device=device), torch.eye(3, device=device)])
    B = torch.nested.nested_tensor([torch.ones(2, 1, device=device), torch.ones(2, 1, device=device)])
    with pytest.raises(ValueError, match="right-hand side 1 has 2 rows"):
        bc.solve(good, B)
    B = torch.nested.nested_tensor([torch.ones(2, 1, device=device), torch.ones(3, 2, device=device)])
    with pytest.raises(ValueError, match="different column counts"):
        bc.solve(good, B)
    with pytest.raises(TypeError, match="nested tensor"):
        bc.solve(good, torch.ones(3, 1, device=device))


@pytest.mark.parametrize("device", DEVICE_PARAMS)
def test_nested_autograd_matches_linalg(device):
    mats = [m.requires_grad_() for m in spd_list(torch.float64, device, [3, 5, 2])]
    rhs = [make_rhs((s, 2), torch.float64, device).requires_grad_() for s in (3, 5, 2)]
    X = bc.solve(torch.nested.as_nested_tensor(mats), torch.nested.as_nested_tensor(rhs))
    loss = sum((x * x).sum() for x in X.unbind())
    grads = torch.autograd.grad(loss, mats + rhs)
    ref_loss = sum((torch.linalg.solve(m, b) ** 2).sum() for m, b in zip(mats, rhs))
    ref = torch.autograd.grad(ref_loss, mats + rhs)
    # torch.linalg.solve's gradient is not symmetrized; ours (Hermitian input) is.
    for g, r in zip(grads[:3], ref[:3]):
        torch.testing.assert_close(g, (r + r.mT) / 2)
    for g, r in zip(grads[3:], ref[3:]):
        torch.testing.assert_close(g, r)


@pytest.mark.parametrize("device", DEVICE_PARAMS)
def test_pack_unpack_roundtrip(device):
    mats = spd_list(torch.float32, device)
    r = ragged.pack(mats)
    assert r.n.tolist() == SIZES and r.offsets.device.type == "cpu"
    for m, u in zip(mats, ragged.unpack(r.values, r.n, r.offsets)):
        assert torch.equal(m, u)
    blocks = [make_rhs((s,), torch.float32, device) for s in SIZES]
    bv, boff, k = ragged.pack_rhs(blocks, r.n)
    assert k == 1
    X = ragged.posv_vbatched(r.values, r.n, r.offsets, bv, boff, k)[0]
    for m, b, x in zip(mats, blocks, ragged.unpack(X, r.n, boff, cols=1)):
        torch.testing.assert_close(x.view(-1), torch.linalg.solve(m.double(), b.double()).float(),
                                   rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="matrix 1 has shape"):
        ragged.pack([torch.eye(2), torch.ones(2, 3)])


def test_from_jagged_checks_component_lengths():
    A = torch.nested.nested_tensor([torch.eye(2).reshape(-1), torch.eye(3).reshape(-1)],
                                   layout=torch.jagged)
    with pytest.raises(ValueError, match="component 1 holds 9 values, but n\\[1\\] = 2"):
        ragged.from_jagged(A, torch.tensor([2, 2]))


def _jagged(mats):
    return torch.nested.nested_tensor([m.reshape(-1) for m in mats], layout=torch.jagged)


@pytest.mark.parametrize("device", DEVICE_PARAMS)
def test_jagged_adapters_and_compile(device):
    sizes = [3, 5, 2, 4]
    mats = spd_list(torch.float64, device, sizes)
    n = torch.tensor(sizes, device=device)
    A = _jagged(mats)
    B = torch.nested.nested_tensor([make_rhs((s, 2), torch.float64, device) for s in sizes],
                                   layout=torch.jagged)

    def f(A, n, B):
        L, info = ragged.cholesky_jagged(A, n, max_n=5)
        X = ragged.solve_jagged(A, n, B, max_n=5)
        return L, info, X

    eager = f(A, n, B)
    compiled = torch.compile(f, fullgraph=True, backend="aot_eager")(A, n, B)
    for out in (eager, compiled):
        L, info, X = out
        assert info.tolist() == [0] * 4
        for m, Li, Bi, Xi in zip(mats, L.unbind(), B.unbind(), X.unbind()):
            s = m.shape[0]
            torch.testing.assert_close(Li.view(s, s), torch.linalg.cholesky(m))
            torch.testing.assert_close(Xi, torch.linalg.solve(m, Bi))


# ---------------------------------------------------------------------------
# gradcheck of the flat ops (float64 and complex128)


def _flat_case(dtype, device, sizes=(2, 0, 3, 1)):
    mats = spd_list(dtype, "cpu", list(sizes))
    r = ragged.pack(mats)
    return r._replace(values=r.values.to(device)), list(sizes)


def _herm(values, r):
    # Differentiable through the Hermitian part, as torch.linalg's gradcheck wrappers do.
    return ops._tri_vbatched(values, r.n, r.offsets, 2)


@pytest.mark.parametrize("device", DEVICE_PARAMS)
@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
@pytest.mark.parametrize("upper", [False, True])
def test_gradcheck_potrf_posv(device, dtype, upper):
    r, sizes = _flat_case(dtype, device)
    A = r.values.clone().requires_grad_()
    torch.autograd.gradcheck(
        lambda A: ops.potrf_vbatched(_herm(A, r), r.n, r.offsets, None, upper)[0], (A,))
    bv, boff, k = ragged.pack_rhs([make_rhs((s, 2), dtype, device) for s in sizes], r.n)
    B = bv.requires_grad_()
    torch.autograd.gradcheck(
        lambda A, B: ops.posv_vbatched(_herm(A, r), r.n, r.offsets, B, boff, k, None, upper)[:2],
        (A, B))


@pytest.mark.parametrize("device", DEVICE_PARAMS)
@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
@pytest.mark.parametrize("upper", [False, True])
def test_gradcheck_potrs(device, dtype, upper):
    r, sizes = _flat_case(dtype, device)
    L = ops.potrf_vbatched(r.values, r.n, r.offsets, None, upper)[0].detach().requires_grad_()
    bv, boff, k = ragged.pack_rhs([make_rhs((s, 3), dtype, device) for s in sizes], r.n)
    torch.autograd.gradcheck(
        lambda L, B: ops.potrs_vbatched(L, r.n, r.offsets, B, boff, k, None, upper),
        (L, bv.requires_grad_()))


@pytest.mark.parametrize("device", DEVICE_PARAMS)
@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("unit", [False, True])
def test_gradcheck_trsm(device, dtype, left, transpose, unit):
    sizes = [2, 3, 0, 1]
    tris = [make_tri((), s, dtype, "cpu", upper=True) for s in sizes]
    r = ragged.pack(tris)
    blocks = [make_rhs((s, 2) if left else (2, s), dtype, device) for s in sizes]
    bv = torch.cat([b.reshape(-1) for b in blocks])
    boff = torch.tensor([0, 4, 10, 10])
    A = r.values.to(device).requires_grad_()
    torch.autograd.gradcheck(
        lambda A, B: ops.trsm_vbatched(A, r.n, r.offsets, B, boff, 2, None, True, left,
                                       transpose, unit),
        (A, bv.requires_grad_()))


@pytest.mark.parametrize("device", DEVICE_PARAMS)
def test_potrf_grad_matches_linalg(device):
    mats = [m.requires_grad_() for m in spd_list(torch.float64, device, [3, 4])]
    r = ragged.pack(mats)
    L, _ = ops.potrf_vbatched(r.values, r.n, r.offsets, None, False)
    w = torch.randn_like(L)
    grads = torch.autograd.grad((L * w).sum(), mats)
    for m, g, Lw in zip(mats, grads, ragged.unpack(w, r.n, r.offsets)):
        ref = torch.autograd.grad((torch.linalg.cholesky(m) * Lw).sum(), m)[0]
        torch.testing.assert_close(g, (ref + ref.mT) / 2)


# ---------------------------------------------------------------------------
# opcheck (schema, autograd registration, fake tensors) for every ragged op


def _opcheck_samples(device):
    r, sizes = _flat_case(torch.float64, device)
    bv, boff, k = ragged.pack_rhs([make_rhs((s, 2), torch.float64, device) for s in sizes], r.n)
    L = ops.potrf_vbatched(r.values, r.n, r.offsets, None, False)[0]
    n, off = r.n, r.offsets
    return [
        ("potrf_vbatched", (r.values, n, off, None, False)),
        ("potrf_vbatched", (r.values.requires_grad_(), n, off, 3, True)),
        ("potrs_vbatched", (L, n, off, bv, boff, k, None, False)),
        ("posv_vbatched", (r.values.detach(), n, off, bv.clone().requires_grad_(), boff, k, None, True)),
        ("trsm_vbatched", (L, n, off, bv, boff, k, None, False, True, True, False)),
        ("_tri_vbatched", (r.values.detach(), n, off, 2)),
        ("_gemm_vbatched", (L, off, -1, -1, True, r.values.detach(), off, -1, -1, False, n, off,
                            r.values.numel())),
        ("_ragged_status", (n.to(device), off.to(device), r.values.numel(), boff.to(device),
                            bv.numel(), k, 4)),
    ]


@pytest.mark.parametrize("device", DEVICE_PARAMS)
@pytest.mark.parametrize("index", range(8))
def test_opcheck_vbatched(device, index):
    name, args = _opcheck_samples(device)[index]
    torch.library.opcheck(getattr(ops, name).default, args)
