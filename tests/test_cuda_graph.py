"""CUDA only: the ops never synchronize with the host and work under CUDA graphs."""

import pytest
import torch

import torch_batchchol as bc
from conftest import (
    HAS_CUDA,
    assert_close_rel,
    cond2,
    cuda_kernel_names,
    make_rhs,
    make_spd,
    make_tri,
    ops,
    tol,
)

pytestmark = pytest.mark.cuda

DTYPES = [torch.float32, torch.float64, torch.complex64, torch.complex128]


class sync_debug_error:
    """torch.cuda.set_sync_debug_mode('error') for the duration of a block."""

    def __enter__(self):
        torch.cuda.synchronize()
        self.old = torch.cuda.get_sync_debug_mode()
        torch.cuda.set_sync_debug_mode("error")

    def __exit__(self, *exc):
        torch.cuda.set_sync_debug_mode(self.old)
        return False


def _cases(dtype):
    A = make_spd((4,), 9, dtype, "cuda")
    B = make_rhs((4, 9, 3), dtype, "cuda")
    T = make_tri((4,), 9, dtype, "cuda")
    Bb = make_rhs((2, 1, 9, 3), dtype, "cuda")
    Br = make_rhs((4, 3, 9), dtype, "cuda")
    return [
        ("potrf", lambda: ops.potrf(A, False)),
        ("potrf upper", lambda: ops.potrf(A, True)),
        ("potrf non-contiguous", lambda: ops.potrf(A.mT, False)),
        ("potrf empty", lambda: ops.potrf(A[:0], False)),
        ("potrs", lambda: ops.potrs(T, B, False)),
        ("potrs broadcast", lambda: ops.potrs(T[:1], Bb, False)),
        ("posv", lambda: ops.posv(A, B, False)),
        ("posv broadcast", lambda: ops.posv(A[0], Bb, True)),
        ("trsm", lambda: ops.trsm(T, B, False, True, False, False)),
        ("trsm right transposed", lambda: ops.trsm(T, Br, False, False, True, False)),
        ("trsm unit", lambda: ops.trsm(T, B, True, True, True, True)),
        ("cholesky_ex", lambda: bc.cholesky_ex(A)),
        ("cholesky_solve", lambda: bc.cholesky_solve(B, T)),
        ("solve_triangular", lambda: bc.solve_triangular(T, B, upper=False)),
    ]


@pytest.mark.parametrize("dtype", DTYPES)
def test_no_host_sync(dtype):
    if not HAS_CUDA:
        pytest.skip("no CUDA")
    cases = _cases(dtype)
    # Warm up outside the checked region (allocator growth, lazy cuBLAS/cuSOLVER
    # handles may legitimately sync once).
    for _, fn in cases:
        fn()
    for name, fn in cases:
        with sync_debug_error():
            try:
                fn()
            except RuntimeError as e:
                pytest.fail(f"{name} synchronized with the host: {e}")


def test_no_host_sync_with_failures():
    if not HAS_CUDA:
        pytest.skip("no CUDA")
    A = make_spd((3,), 5, torch.float64, "cuda")
    A[1] = -A[1]
    A[2, 3, 1] = float("nan")
    B = make_rhs((3, 5, 2), torch.float64, "cuda")
    ops.posv(A, B, False)
    with sync_debug_error():
        L, info = ops.potrf(A, False)
        X, L2, info2 = ops.posv(A, B, False)
    assert info.tolist() == [0, 1, 4] and info2.tolist() == [0, 1, 4]


def test_sync_debug_mode_catches_syncs():
    # Guard against a vacuous test: the mode must actually raise here.
    if not HAS_CUDA:
        pytest.skip("no CUDA")
    t = torch.ones(3, device="cuda")
    with pytest.raises(RuntimeError):
        with sync_debug_error():
            t.sum().item()


def _capture(fn, static_inputs):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            fn(*static_inputs)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        outs = fn(*static_inputs)
    return g, outs


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [4, 33])
def test_cuda_graph_capture_and_replay(dtype, n):
    if not HAS_CUDA:
        pytest.skip("no CUDA")

    def fn(A, B, T, Br):
        L, info = ops.potrf(A, False)
        X1 = ops.potrs(L, B, False)
        X2, L2, info2 = ops.posv(A, B, True)
        X3 = ops.trsm(T, B, False, True, True, False)
        X4 = ops.trsm(T, Br, True, False, False, True)
        return L, info, X1, X2, L2, info2, X3, X4

    def inputs():
        A = make_spd((3,), n, dtype, "cuda")
        B = make_rhs((3, n, 2), dtype, "cuda")
        T = make_tri((3,), n, dtype, "cuda")
        Br = make_rhs((3, 2, n), dtype, "cuda")
        return [A, B, T, Br]

    static = [x.clone() for x in inputs()]
    g, outs = _capture(fn, static)
    for round_ in range(3):
        new = inputs()
        if round_ == 2:
            # A failing matrix in the replayed data: info must update too.
            new[0][1] = -new[0][1]
        for s, x in zip(static, new):
            s.copy_(x)
        g.replay()
        torch.cuda.synchronize()
        expected = fn(*new)
        bound = tol(dtype, n, max(cond2(new[0][[0, 2]]), cond2(new[2])))
        for i, (o, e) in enumerate(zip(outs, expected)):
            if o.dtype == torch.int32:
                assert torch.equal(o, e), (round_, i, o, e)
            elif round_ == 2 and i in (0, 2, 3, 4):
                # Only the systems of good matrices are specified.
                assert_close_rel(o[[0, 2]], e[[0, 2]], bound, f"replay {round_} output {i}")
            else:
                assert_close_rel(o, e, bound, f"replay {round_} output {i}")
        if round_ == 2:
            assert outs[1].tolist() == [0, 1, 0] and outs[5].tolist() == [0, 1, 0]


def test_cuda_graph_api_functions():
    if not HAS_CUDA:
        pytest.skip("no CUDA")

    def fn(A, B):
        L, info = bc.cholesky_ex(A)
        return bc.cholesky_solve(B, L), bc.solve_triangular(L, B, upper=False), info

    A, B = make_spd((2,), 6, torch.float64, "cuda"), make_rhs((2, 6, 3), torch.float64, "cuda")
    static = [A.clone(), B.clone()]
    g, outs = _capture(fn, static)
    A2, B2 = make_spd((2,), 6, torch.float64, "cuda"), make_rhs((2, 6, 3), torch.float64, "cuda")
    static[0].copy_(A2)
    static[1].copy_(B2)
    g.replay()
    torch.cuda.synchronize()
    for o, e in zip(outs, fn(A2, B2)):
        if o.dtype == torch.int32:
            assert torch.equal(o, e)
        else:
            assert_close_rel(o, e, tol(torch.float64, 6, cond2(A2)), "api replay")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64])
def test_cuda_graph_one_large_system(monkeypatch, dtype):
    # One system of large order runs on cuSOLVER / cuBLAS eagerly (potrf_single.cu,
    # solve_single.cu) and on the library's kernels under capture; both must agree.
    if not HAS_CUDA:
        pytest.skip("no CUDA")
    monkeypatch.setenv("BATCHCHOL_POTRF_SINGLE", "1")
    monkeypatch.setenv("BATCHCHOL_SOLVE_SINGLE", "1")
    n = 400

    def fn(A, B, T):
        L, info = ops.potrf(A, False)
        X, info2 = ops.posv_solve(A, B, False)
        return L, info, ops.potrs(L, B, False), X, info2, ops.trsm(T, B, False, True, True, False)

    def inputs():
        return [make_spd((1,), n, dtype, "cuda"), make_rhs((1, n, 2), dtype, "cuda"),
                make_tri((1,), n, dtype, "cuda")]

    static = [x.clone() for x in inputs()]
    # The eager calls take the routes; warm the library's kernels up too, since they are
    # what the capture records.
    assert not any("blocked_" in k for k in cuda_kernel_names(lambda: ops.potrf(static[0], False)))
    monkeypatch.setenv("BATCHCHOL_POTRF_SINGLE", "0")
    monkeypatch.setenv("BATCHCHOL_SOLVE_SINGLE", "0")
    fn(*static)
    monkeypatch.setenv("BATCHCHOL_POTRF_SINGLE", "1")
    monkeypatch.setenv("BATCHCHOL_SOLVE_SINGLE", "1")
    g, outs = _capture(fn, static)
    for round_ in range(2):
        new = inputs()
        if round_ == 1:
            new[0][0, 5, 5] = float("nan")  # info must follow the replayed data
        for s, x in zip(static, new):
            s.copy_(x)
        g.replay()
        torch.cuda.synchronize()
        expected = fn(*new)
        # Round 1 compares only the trsm output: the matrix with a NaN has no condition number.
        bound = tol(dtype, n, cond2(new[2]) if round_ else max(cond2(new[0]), cond2(new[2])))
        for i, (o, e) in enumerate(zip(outs, expected)):
            if o.dtype == torch.int32:
                assert o.tolist() == e.tolist() == [0 if round_ == 0 else 6], (round_, i)
            elif round_ == 0 or i == 5:
                assert_close_rel(o, e, bound, f"replay {round_} output {i}")
