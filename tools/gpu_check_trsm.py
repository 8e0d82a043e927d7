"""GPU check of the CUDA trsm / potrs kernels against torch.linalg (run on a GPU).

    python tools/gpu_check_trsm.py            # correctness table + timings
    TORCH_BATCHCHOL_LIBRARY=/tmp/bc/batchchol_dev.so python tools/gpu_check_trsm.py

Correctness: all 16 flag combinations of trsm, 4 dtypes, many n and k, broadcast
batches, non-contiguous B, NaN in the triangle that must not be read; potrs both
triangles. Errors are relative to the float64 reference and compared with
tol = 8 * n * eps(dtype) * cond(A). Exits 1 on any failure.
Timing: CUDA events, warm-up, median, batch 10,000.
"""

import itertools
import math
import sys
import time

import torch

import torch_batchchol  # noqa: F401  (registers torch.ops.batchchol)

ops = torch.ops.batchchol
dev = torch.device("cuda")
DTYPES = [torch.float32, torch.float64, torch.complex64, torch.complex128]
NS = [1, 2, 3, 7, 16, 31, 32, 33, 64, 100, 128, 255, 256, 257, 512, 1024]
KS = [1, 3, 16, 65]
REF = {torch.float32: torch.float64, torch.float64: torch.float64,
       torch.complex64: torch.complex128, torch.complex128: torch.complex128}


def short(dt):
    return str(dt).replace("torch.", "")


def tri_matrix(batch, n, upper, unit, dtype, gen):
    """Diagonally dominant triangular matrices (float64 reference, clean) and the
    kernel input (dtype, NaN outside the referenced triangle and on a unit diagonal)."""
    rd = REF[dtype]
    M = torch.randn(batch, n, n, dtype=rd, device=dev, generator=gen) * (0.5 / n)
    M = M.triu(1) if upper else M.tril(-1)
    diag = torch.ones(n, dtype=rd, device=dev) if unit else \
        (2 + torch.rand(n, dtype=torch.float64, device=dev, generator=gen)).to(rd)
    clean = M + torch.diag_embed(diag.expand(batch, n))
    inp = clean.to(dtype).clone()
    keep = torch.ones(n, n, dtype=torch.bool, device=dev)
    keep = keep.triu(1 if unit else 0) if upper else keep.tril(-1 if unit else 0)
    inp = inp.masked_fill(~keep, float("nan"))
    return clean, inp


def rel_err(X, ref):
    d = (X.to(ref.dtype) - ref).abs().amax().item()
    return d / max(ref.abs().amax().item(), 1e-300)


def check_trsm(gen, results):
    # Batch patterns: (A batch, B batch): per system, shared A (stride 0), broadcast both.
    patterns = [((3,), (3,)), ((), (4,)), ((2, 1), (3,))]
    case = 0
    for dtype, n in itertools.product(DTYPES, NS):
        eps = torch.finfo(dtype).eps
        for upper, unit in itertools.product([False, True], repeat=2):
            a_b, b_b = patterns[case % 3]
            clean, A = tri_matrix(math.prod(a_b), n, upper, unit, dtype, gen)
            clean, A = clean.reshape(*a_b, n, n), A.reshape(*a_b, n, n)
            cond = torch.linalg.cond(clean.reshape(-1, n, n), p=1).amax().item()
            tol = 8 * n * eps * cond
            for left, trans, k in itertools.product([True, False], [False, True], KS):
                case += 1
                shape = (*b_b, n, k) if left else (*b_b, k, n)
                Bref = torch.randn(shape, dtype=REF[dtype], device=dev, generator=gen)
                B = Bref.to(dtype)
                if case % 2:
                    B = B.mT.contiguous().mT  # non-contiguous input
                X = ops.trsm(A, B, upper, left, trans, unit)
                Aop, up = (clean.mH, not upper) if trans else (clean, upper)
                ref = torch.linalg.solve_triangular(Aop, Bref, upper=up, left=left,
                                                    unitriangular=unit)
                ok = X.shape == ref.shape and X.is_contiguous()
                err = rel_err(X, ref) if ok else float("inf")
                ok = ok and err <= tol
                key = ("trsm", short(dtype), f"up={int(upper)} left={int(left)} "
                       f"T={int(trans)} unit={int(unit)}")
                results.setdefault(key, [True, 0.0, []])
                r = results[key]
                r[0] &= ok
                r[1] = max(r[1], err / tol if tol > 0 else err)
                if not ok:
                    r[2].append(f"n={n} k={k} err={err:.2e} tol={tol:.2e}")


def check_potrs(gen, results):
    for dtype, n, upper in itertools.product(DTYPES, NS, [False, True]):
        eps = torch.finfo(dtype).eps
        rd = REF[dtype]
        G = torch.randn(3, n, n, dtype=rd, device=dev, generator=gen)
        S = G @ G.mH / n + torch.eye(n, dtype=rd, device=dev)
        Lc = torch.linalg.cholesky(S, upper=upper)
        cond = torch.linalg.cond(S, p=1).amax().item()
        L = Lc.to(dtype)
        keep = torch.ones(n, n, dtype=torch.bool, device=dev)
        L = L.masked_fill(~(keep.triu() if upper else keep.tril()), float("nan"))
        for k, pat in itertools.product(KS, range(2)):
            Lin, Lref = (L, Lc) if pat == 0 else (L[:1], Lc[:1])  # per system / shared
            Bref = torch.randn(3, n, k, dtype=rd, device=dev, generator=gen)
            X = ops.potrs(Lin, Bref.to(dtype), upper)
            ref = torch.cholesky_solve(Bref, Lref, upper=upper)
            err = rel_err(X, ref)
            tol = 8 * n * eps * cond
            ok = err <= tol and X.shape == ref.shape
            key = ("potrs", short(dtype), f"upper={int(upper)}")
            results.setdefault(key, [True, 0.0, []])
            r = results[key]
            r[0] &= ok
            r[1] = max(r[1], err / tol)
            if not ok:
                r[2].append(f"n={n} k={k} shared={pat} err={err:.2e} tol={tol:.2e}")


def check_empty():
    ok = True
    for shape_a, shape_b in [((0, 4, 4), (0, 4, 2)), ((0, 0), (0, 3)), ((5, 5), (5, 0))]:
        A = torch.eye(shape_a[-1], device=dev).expand(*shape_a).contiguous()
        B = torch.zeros(shape_b, device=dev)
        ok &= ops.trsm(A, B, False, True, False, False).shape == B.shape
        ok &= ops.potrs(A, B, False).shape == B.shape
    return ok


def timed(fn, budget=0.25):
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    reps = max(1, min(20, int(budget / max(time.perf_counter() - t0, 1e-6))))
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    return sorted(times)[len(times) // 2]


def bench():
    print("\ntimings, batch 10000, lower, left, ms (median)")
    print(f"{'op':6} {'dtype':8} {'n':>4} {'k':>3} {'ours':>9} {'torch':>9} {'speedup':>8}")
    for dtype, n, k in itertools.product([torch.float32, torch.float64], [16, 32, 64, 128, 256],
                                         [1, 16]):
        batch = 10000
        G = torch.randn(batch, n, n, dtype=dtype, device=dev) / n
        L = G.tril(-1) + 2 * torch.eye(n, dtype=dtype, device=dev)
        B = torch.randn(batch, n, k, dtype=dtype, device=dev)
        t_ours = timed(lambda: ops.trsm(L, B, False, True, False, False))
        t_ref = timed(lambda: torch.linalg.solve_triangular(L, B, upper=False))
        print(f"{'trsm':6} {short(dtype):8} {n:4} {k:3} {t_ours:9.3f} {t_ref:9.3f} "
              f"{t_ref / t_ours:7.1f}x")
        t_ours = timed(lambda: ops.potrs(L, B, False))
        t_ref = timed(lambda: torch.cholesky_solve(B, L, upper=False))
        print(f"{'potrs':6} {short(dtype):8} {n:4} {k:3} {t_ours:9.3f} {t_ref:9.3f} "
              f"{t_ref / t_ours:7.1f}x")
        del G, L, B


def main():
    t0 = time.time()
    gen = torch.Generator(device=dev)
    gen.manual_seed(0)
    results = {}
    check_trsm(gen, results)
    check_potrs(gen, results)
    empty_ok = check_empty()
    failed = not empty_ok
    print(f"{'op':6} {'dtype':10} {'flags':28} {'result':6} {'max err/tol':>11}")
    for (op, dt, flags), (ok, worst, notes) in results.items():
        print(f"{op:6} {dt:10} {flags:28} {'PASS' if ok else 'FAIL':6} {worst:11.3g}")
        for note in notes[:4]:
            print("        ", note)
        failed |= not ok
    print(f"empty inputs: {'PASS' if empty_ok else 'FAIL'}   ({time.time() - t0:.1f} s)")
    if "--no-bench" not in sys.argv:
        bench()
    print("FAILED" if failed else "ALL PASSED")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
