"""Fixed-size batched Cholesky benchmark: torch_batchchol against torch.linalg.

    python benchmarks/bench_fixed.py                      # full sweep (GPU)
    python benchmarks/bench_fixed.py --quick              # tiny sweep, CPU/CI smoke
    python benchmarks/bench_fixed.py --ops potrf,posv --sizes 16,32 --dtypes float64 \\
        --json benchmarks/results/h100.json --plot benchmarks/results/h100.png

Ops and competitors (all timed in the same run, on the default device):
  potrf  L, info = potrf(A)        vs linalg.cholesky_ex   [cusolver], [magma]
  potrs  X = potrs(L, B), 1/16 rhs vs cholesky_solve       [cusolver], [magma]
  trsm   L X = B, 1/16 rhs         vs linalg.solve_triangular
  posv   X, info = posv_solve(A, b) vs linalg.solve, cholesky_ex + cholesky_solve
         (posv_solve: posv without the factor, what torch_batchchol.solve runs)
On the CPU there are no linalg backends to choose, so each competitor runs once.
Times are medians of --reps calls; with --rounds R (3 on the CPU by default) the
candidates take turns R times and each keeps the median of its rounds, which makes the
ratios robust on a shared machine.

Roofline (DESIGN-NOTES 2): bytes = every input read once and every output written
once (whole n x n matrices, info as int32; posv: A, b, x and info); flops = n^3/3
(potrf), n^2 k per triangular solve with k right-hand sides (trsm: 1, potrs: 2), their
sum for posv.
The copy bandwidth is measured in this run; peak flops are 67 TFLOP/s on the GPU
(BATCHCHOL_PEAK_TFLOPS overrides) and a measured matmul rate on the CPU.
"""

import argparse
import gc
import os
import statistics
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import common  # noqa: E402

try:
    import torch_batchchol as tb
except ImportError:  # not installed: use the checkout (with TORCH_BATCHCHOL_LIBRARY)
    sys.path.insert(1, os.path.dirname(HERE))
    import torch_batchchol as tb

ops = torch.ops.batchchol
ALL_OPS = ("potrf", "potrs", "trsm", "posv")
DTYPES = {"float32": torch.float32, "float64": torch.float64}
BACKENDS = ("cusolver", "magma")
# Relative difference from the competitor's answer beyond which a row is flagged.
CHECK_TOL = {torch.float32: 1e-3, torch.float64: 1e-9}


def default_batch(op, n, dtype):
    """The sweep's batch sizes (see README): big enough to saturate a GPU."""
    if op == "posv":
        return 20_000 if n >= 128 else 100_000
    if n >= 512:
        return 2_000
    if n >= 64:
        return 10_000
    return common.batch_for_bytes(n, dtype)  # inputs >= 256 MB


def make_spd(batch, n, dtype, device):
    # Built in chunks so that the temporaries stay small next to the result.
    out = torch.empty(batch, n, n, dtype=dtype, device=device)
    eye = torch.eye(n, dtype=dtype, device=device)
    step = max(1, (64 << 20) // (n * n * out.element_size()))
    for s in range(0, batch, step):
        m = torch.randn(min(step, batch - s), n, n, dtype=dtype, device=device)
        torch.baddbmm(eye, m, m.mT, alpha=1.0 / n, out=out[s : s + step])
    return out


def cost(op, n, k, elsize):
    """(bytes, flops) of one matrix (system) of the op."""
    mat, rhs = n * n * elsize, n * k * elsize
    if op == "potrf":
        return 2 * mat + 4, n**3 / 3
    if op == "potrs":
        return mat + 2 * rhs, 2 * n * n * k
    if op == "trsm":
        return mat + 2 * rhs, n * n * k
    return mat + 2 * rhs + 4, n**3 / 3 + 2 * n * n * k  # posv: reads A, b; writes X, info


def rel_diff(x, ref):
    x, ref = x.reshape(-1), ref.reshape(-1)
    return ((x - ref).norm() / ref.norm().clamp_min(1e-300)).item()


# torch.cholesky_solve on its cuSOLVER path loops over the batch in Python-visible
# time when there is more than one right-hand side (cuSOLVER's potrsBatched takes one):
# 220 ms for 10,000 systems of n = 64 (DESIGN-NOTES 1). Above this many systems the
# point would take minutes, so that competitor is left out (reported as skipped).
CUSOLVER_MULTI_RHS_MAX_BATCH = 20_000


def competitors(op, device, k=1, batch=1):
    """[(name, backend, fn(inputs) -> tensor to compare)]."""
    backends = BACKENDS if device.type == "cuda" else (None,)
    if op in ("potrs", "posv") and k > 1 and batch > CUSOLVER_MULTI_RHS_MAX_BATCH:
        skipped = [b for b in backends if b == "cusolver"]
        if skipped:
            common.log(f"  skipping cholesky_solve[cusolver]: {batch} systems with {k} "
                       "right-hand sides would loop per matrix")
        backends = tuple(b for b in backends if b != "cusolver")

    def tag(base, b):
        return f"{base}[{b}]" if b else base

    if op == "potrf":
        return [(tag("cholesky_ex", b), b, lambda s: torch.linalg.cholesky_ex(s["A"]).L)
                for b in backends]
    if op == "potrs":
        return [(tag("cholesky_solve", b), b, lambda s: torch.cholesky_solve(s["B"], s["L"]))
                for b in backends]
    if op == "trsm":
        return [("solve_triangular", None,
                 lambda s: torch.linalg.solve_triangular(s["L"], s["B"], upper=False))]
    return [("linalg.solve", None, lambda s: torch.linalg.solve(s["A"], s["B"]))] + [
        (tag("cholesky_ex+solve", b), b,
         lambda s: torch.cholesky_solve(s["B"], torch.linalg.cholesky_ex(s["A"]).L))
        for b in backends
    ]


def ours(op):
    if op == "potrf":
        return lambda s: ops.potrf(s["A"], False)[0]
    if op == "potrs":
        return lambda s: ops.potrs(s["L"], s["B"], False)
    if op == "trsm":
        return lambda s: ops.trsm(s["L"], s["B"], False, True, False, False)
    return lambda s: ops.posv_solve(s["A"], s["B"], False)[0]


def make_inputs(op, n, k, batch, dtype, device):
    A = make_spd(batch, n, dtype, device)
    s = {"A": A}
    if op != "potrf":
        s["B"] = torch.randn(batch, n, k, dtype=dtype, device=device)
    if op in ("potrs", "trsm"):
        s["L"] = torch.linalg.cholesky_ex(A).L
        del s["A"]
    return s


def bench_point(op, n, k, batch, dtype, device, machine, args):
    elsize = torch.empty((), dtype=dtype).element_size()
    nbytes, flops = cost(op, n, k, elsize)
    nbytes, flops = nbytes * batch, flops * batch
    base = make_inputs(op, n, k, batch, dtype, device)
    set_bytes = sum(t.numel() * t.element_size() for t in base.values())
    sets = [base] + [{key: t.clone() for key, t in base.items()}
                     for _ in range(common.rotation_count(set_bytes, device) - 1)]
    record = dict(op=op, n=n, dtype=str(dtype).replace("torch.", ""), batch=batch, nrhs=k,
                  bytes=nbytes, flops=flops, ours_ms=None, competitors={}, check=None)
    timing = dict(warmup=args.warmup, reps=args.reps)

    # Candidates that run: ours, then each competitor whose first call works (its
    # result is the reference of the accuracy check).
    fn = ours(op)
    runs = []
    try:
        result = fn(base)
        runs.append(("ours", None, fn))
    except Exception as exc:  # an op without a kernel yet still lets the sweep go on
        common.log(f"  ours failed: {type(exc).__name__}: {str(exc).splitlines()[0][:120]}")
        result = None
    for name, backend, cfn in competitors(op, device, k, batch):
        try:
            with common.linalg_backend(backend):
                ref = cfn(base)
            runs.append((name, backend, cfn))
            if result is not None and record["check"] is None:
                record["check"] = rel_diff(result, ref)
        except Exception as exc:
            common.log(f"  {name} failed: {type(exc).__name__}: {str(exc).splitlines()[0][:120]}")
            record["competitors"][name] = None
    # Rounds alternate the candidates, so that a slow spell of a shared machine (the
    # CPU runs) hits all of them alike; each one's time is the median of its rounds.
    samples = {name: [] for name, _, _ in runs}
    for _ in range(args.rounds):
        for name, backend, cfn in runs:
            with common.linalg_backend(backend):
                samples[name].append(
                    common.time_ms(lambda i: cfn(sets[i]), len(sets), device, **timing))
    for name, times in samples.items():
        t = statistics.median(times)
        if name == "ours":
            record["ours_ms"] = t
        else:
            record["competitors"][name] = t
    del sets, base, result

    times = [t for t in record["competitors"].values() if t is not None]
    best = min(times) if times else None
    roof = common.roofline_ms(nbytes, flops, machine["bandwidth"], machine["peak"][record["dtype"]])
    t = record["ours_ms"]
    record.update(best_competitor_ms=best, roof_ms=roof,
                  speedup=best / t if best and t else None,
                  roof_fraction=roof / t if t else None)
    if record["check"] is not None and record["check"] > CHECK_TOL[dtype]:
        common.log(f"  WARNING: ours differs from torch by {record['check']:.2e} (relative)")
    return record


def print_table(op, records, names):
    cols = [("n", 6, "d"), ("dtype", 9, "s"), ("batch", 9, "d"), ("nrhs", 5, "d"),
            ("ours ms", 10, ".3f")]
    cols += [(f"{name} ms", max(12, len(name) + 4), ".3f") for name in names]
    cols += [("speedup", 9, ".2f"), ("roofline", 9, ".2f"), ("rel diff", 10, ".1e")]
    rows = [[r["n"], r["dtype"], r["batch"], r["nrhs"] if op != "potrf" else None, r["ours_ms"]]
            + [r["competitors"].get(name) for name in names]
            + [r["speedup"], r["roof_fraction"], r["check"]] for r in records]
    print(common.format_table(f"\n== {op} (speedup vs best competitor; roofline = t_roof / t)",
                              cols, rows), flush=True)


def parse_list(text, cast):
    return [cast(x) for x in text.split(",") if x]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n\n", 2)[2])
    p.add_argument("--ops", default=",".join(ALL_OPS), help="comma list of " + ",".join(ALL_OPS))
    p.add_argument("--sizes", default=None,
                   help="comma list of n (posv: k); default 4..512 (posv 16..128)")
    p.add_argument("--dtypes", default="float32,float64")
    p.add_argument("--batch", type=int, default=None, help="one batch size for every point")
    p.add_argument("--nrhs", default="1,16", help="right-hand sides for potrs/trsm")
    p.add_argument("--quick", action="store_true", help="tiny sweep (CPU / CI smoke test)")
    p.add_argument("--device", default=None, help="default: cuda if available, else cpu")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--rounds", type=int, default=None,
                   help="timing rounds, candidates alternating (default: 3 on the CPU, 1 on the GPU)")
    p.add_argument("--json", default=None, help="write all results to this JSON file")
    p.add_argument("--plot", default=None, help="write a PNG of speedup and roofline fraction")
    args = p.parse_args(argv)

    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    op_list = parse_list(args.ops, str)
    unknown = set(op_list) - set(ALL_OPS)
    if unknown:
        p.error(f"unknown ops: {sorted(unknown)}")
    dtypes = [DTYPES[d] for d in parse_list(args.dtypes, str)]
    nrhs_list = parse_list(args.nrhs, int)
    if args.rounds is None:
        args.rounds = 3 if device.type == "cpu" and not args.quick else 1
    if args.quick:
        args.warmup, args.reps = 1, min(args.reps, 5)
    torch.manual_seed(0)

    env = common.environment(device)
    common.log(f"device {device} | torch {torch.__version__} | library {tb.LIBRARY_PATH}")
    bandwidth = common.copy_bandwidth(device, (64 << 20) if args.quick else None)
    machine = {"bandwidth": bandwidth,
               "peak": {str(d).replace("torch.", ""): common.peak_flops(device, d) for d in dtypes}}
    print(f"device: {env.get('gpu', env.get('cpu'))} | torch {torch.__version__} | "
          f"copy bandwidth {bandwidth / 1e9:.1f} GB/s | peak "
          + ", ".join(f"{k} {v / 1e12:.2f} TFLOP/s" for k, v in machine["peak"].items()))

    records = []
    for op in op_list:
        if args.sizes:
            sizes = parse_list(args.sizes, int)
        elif args.quick:
            sizes = [16, 32] if op == "posv" else [8, 32]
        else:
            sizes = [16, 32, 64, 128] if op == "posv" else [4, 8, 16, 32, 64, 128, 256, 512]
        ks = [1] if op in ("potrf", "posv") else nrhs_list
        op_records = []
        for dtype in dtypes:
            for n in sizes:
                for k in ks:
                    batch = args.batch or (256 if args.quick else default_batch(op, n, dtype))
                    if device.type == "cpu" and not (args.batch or args.quick):
                        batch = max(64, batch // 50)  # the GPU sweep would take hours on a CPU
                    dname = str(dtype).replace("torch.", "")
                    common.log(f"[{op}] n={n} {dname} batch={batch} nrhs={k} ...")
                    r = bench_point(op, n, k, batch, dtype, device, machine, args)
                    op_records.append(r)
                    common.log("  ours {} ms, best torch {} ms".format(
                        *(f"{t:.3f}" if t is not None else "-"
                          for t in (r["ours_ms"], r["best_competitor_ms"]))))
                    gc.collect()
                    if device.type == "cuda":
                        torch.cuda.empty_cache()
        names = list(dict.fromkeys(n for r in op_records for n in r["competitors"]))
        print_table(op, op_records, names)
        records += op_records
        # Saved after every op, so that a sweep cut off by a time limit keeps its tables.
        if args.json:
            common.write_json(args.json, env, machine, records)
        if args.plot:
            common.plot(args.plot, records)
    return 0


if __name__ == "__main__":
    sys.exit(main())
