"""GPU check of potrf and posv: correctness sweep over n, dtypes, upper/lower, right-hand
sides and info (a failed matrix next to good ones); timing of potrf vs cholesky_ex.

    python tools/gpu_potrf_check.py [--lib path/to/lib.so] [--no-bench]
"""

import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))
import common  # noqa: E402  (benchmarks/common.py: CUDA-event median timing)


def say(lines, msg):
    """Prints at once (a run cut off by its time limit keeps what it found) and keeps it."""
    print(msg, flush=True)
    lines.append(msg)


def spd(batch, n, dtype, device, cond=100.0):
    q, _ = torch.linalg.qr(torch.randn(batch, n, n, dtype=torch.complex128 if dtype.is_complex else torch.float64, device=device))
    ev = torch.logspace(0, torch.log10(torch.tensor(cond)).item(), n, dtype=torch.float64, device=device)
    A = (q * ev.to(q.dtype)) @ q.mH
    A = 0.5 * (A + A.mH)
    return A.to(dtype)


def check(ops, lines):
    dev = "cuda"
    bad = 0
    for dtype in (torch.float32, torch.float64, torch.complex64, torch.complex128):
        eps = torch.finfo(dtype).eps
        for n in list(range(1, 34)) + [40, 47, 64, 65, 100, 128, 129, 200, 256, 257, 300, 512, 600]:
            batch = 7 if n <= 300 else 3
            A = spd(batch, n, dtype, dev)
            for upper in (False, True):
                Ain = A.clone()
                # garbage in the unused triangle must not matter
                if n > 1:
                    mask = torch.ones(n, n, dtype=torch.bool, device=dev).triu(1)
                    if upper:
                        mask = mask.mT
                    Ain[:, mask] = float("nan")
                L, info = ops.potrf(Ain, upper)
                Lf = L.to(torch.complex128 if dtype.is_complex else torch.float64)
                R = Lf.mH @ Lf if upper else Lf @ Lf.mH
                err = ((R - A.to(R.dtype)).abs().amax() / A.abs().amax()).item()
                tri_ok = bool((L.triu(1) == 0).all()) if not upper else bool((L.tril(-1) == 0).all())
                ok = err < 50 * n * eps and int(info.abs().sum()) == 0 and tri_ok
                if not ok:
                    bad += 1
                    say(lines, f"FAIL potrf {dtype} n={n} upper={upper} err={err:.2e} info={info.tolist()} tri_ok={tri_ok}")
        say(lines, f"potrf {dtype} done, failures so far: {bad}")
    # failure detection: non-SPD / NaN / Inf in one matrix, others untouched
    for dtype in (torch.float32, torch.float64):
        for n in (3, 16, 32, 33, 100, 300):
            A = spd(5, n, dtype, dev)
            k = min(2, n - 1)
            A[1, k, k] = -1.0
            A[2, n - 1, 0] = float("nan")
            A[3, 0, 0] = float("inf")
            L, info = ops.potrf(A, False)
            ref = torch.linalg.cholesky_ex(A.double()).info
            got = info.tolist()
            ok = got[0] == 0 and got[4] == 0 and got[1] > 0 and got[2] == n and got[3] == 1
            Lgood = torch.linalg.cholesky(A[[0, 4]].double())
            ok = ok and torch.allclose(L[[0, 4]].double(), Lgood, atol=1e-4 * n)
            if not ok:
                bad += 1
                say(lines, f"FAIL info {dtype} n={n}: got {got}, torch {ref.tolist()}")
    return bad


def check_posv(ops, lines):
    """posv against a float64 solve, n across the warp family's padded orders and past it."""
    dev = "cuda"
    bad = 0
    for dtype in (torch.float32, torch.float64, torch.complex64, torch.complex128):
        eps = torch.finfo(dtype).eps
        for n in list(range(1, 34)) + [40, 64, 65, 128]:
            for k in (1, 9):
                A = spd(6, n, dtype, dev)
                B = torch.randn(6, n, k, dtype=dtype, device=dev)
                ref = torch.linalg.solve(A.to(torch.complex128 if dtype.is_complex else torch.float64),
                                         B.to(torch.complex128 if dtype.is_complex else torch.float64))
                for upper in (False, True):
                    Ain = A.clone()
                    if n > 1:
                        mask = torch.ones(n, n, dtype=torch.bool, device=dev).triu(1)
                        Ain[:, mask.mT if upper else mask] = float("nan")
                    X, L, info = ops.posv(Ain, B, upper)
                    err = ((X.to(ref.dtype) - ref).norm() / ref.norm()).item()
                    Lf = L.to(ref.dtype)
                    R = Lf.mH @ Lf if upper else Lf @ Lf.mH
                    ferr = ((R - A.to(R.dtype)).abs().amax() / A.abs().amax()).item()
                    ok = err < 200 * n * eps * 100 and ferr < 50 * n * eps and int(info.abs().sum()) == 0
                    if not ok:
                        bad += 1
                        say(lines, f"FAIL posv {dtype} n={n} k={k} upper={upper} x err={err:.2e} "
                            f"factor err={ferr:.2e} info={info.tolist()}")
        say(lines, f"posv {dtype} done, failures so far: {bad}")
    for dtype in (torch.float32, torch.float64):
        for n in (3, 16, 32, 33, 64):
            A = spd(4, n, dtype, dev)
            A[1, n - 1, n - 1] = -1.0
            B = torch.randn(4, n, 1, dtype=dtype, device=dev)
            X, L, info = ops.posv(A, B, False)
            good = [0, 2, 3]
            ref = torch.linalg.solve(A[good].double(), B[good].double())
            ok = info.tolist() == [0, n, 0, 0] and torch.allclose(X[good].double(), ref, rtol=1e-3, atol=1e-3)
            if not ok:
                bad += 1
                say(lines, f"FAIL posv info {dtype} n={n}: {info.tolist()}")
    return bad


def bench(ops, lines):
    def t(fn):
        return common.time_ms(lambda i: fn(), 1, torch.device("cuda"))

    x = torch.empty(2**28, dtype=torch.uint8, device="cuda")
    ms = t(lambda: x.clone())
    bw = 2 * x.numel() / ms / 1e6
    lines.append(f"copy bandwidth {bw:.0f} GB/s")
    del x
    lines.append(f"{'dtype':8} {'n':>4} {'batch':>7} {'ours ms':>8} {'torch ms':>8} {'speedup':>7} {'roof':>5}")
    for dtype in (torch.float32, torch.float64):
        for n in (4, 8, 16, 32, 64, 128, 256, 512):
            es = torch.finfo(dtype).bits // 8
            if n < 64:
                batch = max(10000, (256 << 20) // (n * n * es))
            elif n <= 256:
                batch = 10000
            else:
                batch = 2000
            A = spd(batch, n, dtype, "cuda", cond=10.0)
            ours = t(lambda: ops.potrf(A, False))
            ref = t(lambda: torch.linalg.cholesky_ex(A))
            byt = 2 * batch * n * n * es
            roof = max(byt / (bw * 1e9), batch * n**3 / 3 / 67e12) * 1e3
            lines.append(f"{str(dtype)[6:]:8} {n:4d} {batch:7d} {ours:8.3f} {ref:8.3f} {ref / ours:7.2f} {roof / ours:5.2f}")
            del A


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", help="a built library to load instead of torch_batchchol")
    ap.add_argument("--no-bench", action="store_true")
    args = ap.parse_args()
    if args.lib:
        torch.ops.load_library(args.lib)
    else:
        import torch_batchchol  # noqa: F401
    ops = torch.ops.batchchol
    lines = []
    bad = check(ops, lines)
    bad += check_posv(ops, lines)
    say(lines, f"correctness failures: {bad}")
    if not args.no_bench:
        start = len(lines)
        bench(ops, lines)
        print("\n".join(lines[start:]))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
