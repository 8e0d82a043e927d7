"""Ragged-batch solves: potrs_vbatched and trsm_vbatched against the PyTorch workarounds.

For each size distribution (bench_vbatched.py's: uniform in [1, Nmax]; skewed, 1% at
Nmax and 99% uniform in [1, Nmax/10]), Nmax, batch, dtype and number of right-hand
sides k, times in one process, with the factors L (lower) already computed:
  ours      potrs_vbatched / trsm_vbatched (left, lower) with the default kernels;
  warp      the same with BATCHCHOL_RAGGED_SOLVE_KERNEL=warp (the warp-per-system
            kernels for every batch: the path before the column-per-lane kernels);
            the two alternate for --rounds rounds, best round of each;
  bucketed  torch.cholesky_solve / torch.linalg.solve_triangular on one stacked batch
            per distinct size;
  padded    the same on the batch padded to Nmax (identity blocks, zero right-hand
            sides; the padding itself is not timed).
The roofline is each system's matrix and right-hand side read once and its solution
written once at the measured copy bandwidth. Metadata is on the GPU with max_n given.

  python benchmarks/bench_vbatched_solves.py [--quick] [--json out.json] [--plot out.png]
"""

import argparse
import os

import torch

import torch_batchchol  # noqa: F401
from bench_vbatched import (add_sweep_args, bar_axes, buckets_of, make_batch, padded_of,
                            parse_sweep, sample_sizes, save_bars)
from common import copy_bandwidth, environment, format_table, log, time_ms, write_json

OPS = ("potrs", "trsm")


def run_point(dist, nmax, batch, dtype, k, device, args, gen):
    n = sample_sizes(dist, nmax, batch, gen)
    max_n = int(n.max())
    values, nd, od = make_batch(n, dtype, device)
    ops = torch.ops.batchchol
    L, _ = ops.potrf_vbatched(values, nd, od, max_n, False)
    del values
    b_off = (nd.cumsum(0) - nd) * k
    B = torch.randn(int(n.sum()) * k, dtype=dtype, device=device)
    T = lambda fn: time_ms(lambda _: fn(), 1, device, warmup=args.warmup, reps=args.reps)
    esize = L.element_size()
    nbytes = float(((n.double() ** 2) + 2 * n.double() * k).sum()) * esize
    rec = dict(dist=dist, nmax=nmax, batch=batch, dtype=str(dtype).replace("torch.", ""), k=k,
               mean_n=float(n.double().mean()), roofline_ms=nbytes / args.bandwidth * 1e3)
    Lb, Bb = buckets_of(L, n, od, device), buckets_of(B, n, b_off, device, cols=k)
    pad = None
    if batch * nmax * nmax * esize * 3 < args.mem_limit:
        pad = padded_of(Lb, nmax, dtype, device)  # the stacks in bucket order, as padB
        padB = torch.zeros(batch, nmax, k, dtype=dtype, device=device)
        row = 0
        for s, stack in Bb.items():
            padB[row:row + stack.shape[0], :s] = stack
            row += stack.shape[0]
    calls = {
        "potrs": (lambda: ops.potrs_vbatched(L, nd, od, B, b_off, k, max_n, False),
                  lambda: [torch.cholesky_solve(Bb[s], Lb[s]) for s in Lb],
                  lambda: torch.cholesky_solve(padB, pad)),
        "trsm": (lambda: ops.trsm_vbatched(L, nd, od, B, b_off, k, max_n, False, True, False,
                                           False),
                 lambda: [torch.linalg.solve_triangular(Lb[s], Bb[s], upper=False) for s in Lb],
                 lambda: torch.linalg.solve_triangular(pad, padB, upper=False)),
    }
    for op in OPS:
        ours, bucket, padded = calls[op]
        # Ours and the warp-only path alternate, best round of each: the first timing
        # after the inputs are built can be slow by tens of percent.
        mine, warp = [], []
        for _ in range(args.rounds):
            mine.append(T(ours))
            os.environ["BATCHCHOL_RAGGED_SOLVE_KERNEL"] = "warp"
            try:
                warp.append(T(ours))
            finally:
                os.environ.pop("BATCHCHOL_RAGGED_SOLVE_KERNEL", None)
        rec[f"{op}_ms"], rec[f"{op}_warp_ms"] = min(mine), min(warp)
        rec[f"{op}_bucketed_ms"] = T(bucket)
        rec[f"{op}_padded_ms"] = T(padded) if pad is not None else None
        best = min(x for x in (rec[f"{op}_bucketed_ms"], rec[f"{op}_padded_ms"]) if x is not None)
        rec[f"{op}_speedup"] = best / rec[f"{op}_ms"]
        rec[f"{op}_roofline"] = rec["roofline_ms"] / rec[f"{op}_ms"]
    return rec


def points(args):
    for nmax in args.nmax:
        for dist in args.dists:
            for batch in args.batches:
                for dtype in args.dtypes:
                    for k in args.ks:
                        yield dist, nmax, batch, dtype, k


def plot(path, records):
    plt, fig, axes = bar_axes(len(records))
    labels = [f"{r['dist']} N{r['nmax']} b{r['batch']} {r['dtype'][5:]} k{r['k']}" for r in records]
    x = list(range(len(records)))
    for ax, op in zip(axes, OPS):
        w = 0.4
        ax.bar([i - w / 2 for i in x], [r[f"{op}_speedup"] for r in records], w,
               label="ours", color="tab:blue")
        best = [min(v for v in (r[f"{op}_bucketed_ms"], r[f"{op}_padded_ms"]) if v is not None)
                for r in records]
        ax.bar([i + w / 2 for i in x], [b / r[f"{op}_warp_ms"] for b, r in zip(best, records)], w,
               label="warp-per-system only", color="tab:gray")
        ax.set_ylabel(f"{op}_vbatched speedup vs best workaround")
        ax.legend(fontsize=8)
    save_bars(plt, fig, axes, labels, path)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_sweep_args(p, "16,32,128", "uniform,skewed")
    p.add_argument("--ks", default="1,8", help="right-hand sides per system")
    p.add_argument("--rounds", type=int, default=3, help="alternating rounds of ours / warp")
    args = p.parse_args()
    device = parse_sweep(args, "bench_vbatched_solves.py")
    args.ks = [int(x) for x in args.ks.split(",")]
    if args.quick:
        args.nmax, args.batches, args.dtypes, args.ks = [16, 128], [500], [torch.float64], [1]
    args.bandwidth = copy_bandwidth(device)
    log(f"copy bandwidth {args.bandwidth / 1e9:.0f} GB/s")
    gen = torch.Generator().manual_seed(0)
    todo = list(points(args))
    records = []
    for i, (dist, nmax, batch, dtype, k) in enumerate(todo):
        log(f"[{i + 1}/{len(todo)}] {dist} Nmax={nmax} batch={batch} {dtype} k={k}")
        rec = run_point(dist, nmax, batch, dtype, k, device, args, gen)
        records.append(rec)
        if args.json:  # partial results survive an interrupted sweep
            write_json(args.json, environment(device), {"copy_bandwidth": args.bandwidth}, records)
        torch.cuda.empty_cache()
    cols = [("dist", 8, ""), ("Nmax", 5, ""), ("batch", 6, ""), ("dtype", 8, ""), ("k", 3, ""),
            ("roof", 7, ".3f")]
    for op in OPS:
        cols += [(op, 7, ".3f"), ("warp", 7, ".3f"), ("bucket", 7, ".3f"), ("padded", 7, ".3f"),
                 ("spd", 6, ".1f"), ("%roof", 6, ".2f")]
    rows = []
    for r in records:
        row = [r["dist"], r["nmax"], r["batch"], r["dtype"], r["k"], r["roofline_ms"]]
        for op in OPS:
            row += [r[f"{op}_ms"], r[f"{op}_warp_ms"], r[f"{op}_bucketed_ms"],
                    r[f"{op}_padded_ms"], r[f"{op}_speedup"], r[f"{op}_roofline"]]
        rows.append(row)
    print(format_table("potrs_vbatched / trsm_vbatched (ms; warp = warp-per-system kernels only; "
                       "spd = best workaround / ours; %roof = roofline / ours)", cols, rows))
    if args.json:
        write_json(args.json, environment(device), {"copy_bandwidth": args.bandwidth}, records)
    if args.plot:
        plot(args.plot, records)


if __name__ == "__main__":
    main()
