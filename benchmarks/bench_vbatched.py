"""Ragged-batch benchmark: potrf_vbatched and posv_vbatched against the PyTorch workarounds.

For each size distribution (seed papers: uniform in [1, Nmax]; skewed, 1% at Nmax
and 99% uniform in [1, Nmax/10]; Gaussian around Nmax/2; 384 +- r), Nmax, batch
and dtype, times in one process:
  ours      potrf_vbatched with the default kernel choice, and each kernel family
            (warp / registers / shared / greedy / lazy / binned / tile / tile-one,
            BATCHCHOL_VBATCHED_KERNEL; a family that does not apply falls back to the
            default);
  bucketed  torch.linalg.cholesky_ex on one stacked batch per distinct size;
  padded    torch.linalg.cholesky_ex on the batch padded to Nmax with identity
            blocks (factor only: the padding itself is not timed);
  fixed     our fixed-size potrf at the size with the same mean work (uniform
            distributions, and 'equal': every matrix at Nmax, chosen with --dists),
            for the useful-GFLOP/s ratio;
and for posv (one right-hand side) ours against cholesky_ex + cholesky_solve on
buckets and on the padded batch. Metadata is on the GPU with max_n given (no sync).

  python benchmarks/bench_vbatched.py [--quick] [--json out.json] [--plot out.png]
"""

import argparse
import os

import torch

import torch_batchchol  # noqa: F401
from common import environment, format_table, log, time_ms, write_json

FAMILIES = ["warp", "registers", "shared", "greedy", "lazy", "binned", "tile", "tile-one"]


def sample_sizes(dist, nmax, batch, gen):
    if dist == "equal":  # every matrix at Nmax: the ragged path's cost over fixed-size
        return torch.full((batch,), nmax, dtype=torch.int64)
    if dist == "uniform":
        return torch.randint(1, nmax + 1, (batch,), generator=gen)
    if dist == "skewed":
        n = torch.randint(1, max(nmax // 10, 1) + 1, (batch,), generator=gen)
        n[torch.randperm(batch, generator=gen)[: max(batch // 100, 1)]] = nmax
        return n
    if dist == "gaussian":
        return (torch.randn(batch, generator=gen) * nmax / 6 + nmax / 2).round().clamp(1, nmax).long()
    r = int(dist.split("+-")[1])  # "384+-r"
    return torch.randint(384 - r, 384 + r + 1, (batch,), generator=gen)


def make_batch(n, dtype, device):
    """SPD ragged batch: lower triangles in [-1, 1], diagonal n_i + 1 (dominant)."""
    ext = n * n
    offsets = torch.zeros_like(n)
    offsets[1:] = ext[:-1].cumsum(0)
    total = int(ext.sum())
    values = torch.rand(total, dtype=dtype, device=device) * 2 - 1
    nd, od = n.to(device), offsets.to(device)
    owner = torch.repeat_interleave(torch.arange(len(n), device=device), nd)
    first = torch.repeat_interleave(od - (nd.cumsum(0) - nd) * (nd + 1), nd)
    j = torch.arange(int(n.sum()), device=device)
    values[first + j * (nd + 1)[owner]] = (nd + 1)[owner].to(dtype)
    return values, nd, od


def buckets_of(values, n, offsets, device, cols=None):
    """{size: [count, s, s]} stacks of the ragged batch's blocks (s x cols blocks with
    cols), in batch order within each size (built once, not timed)."""
    out = {}
    for s in n.unique().tolist():
        idx = (n == s).nonzero().view(-1).cpu()
        c = s if cols is None else cols
        base = offsets.cpu()[idx]
        gather = (base[:, None] + torch.arange(s * c)[None, :]).to(device)
        out[s] = values[gather].view(-1, s, c)
    return out


def padded_of(buckets, nmax, dtype, device):
    parts = []
    for s, stack in buckets.items():
        P = torch.eye(nmax, dtype=dtype, device=device).repeat(stack.shape[0], 1, 1)
        P[:, :s, :s] = stack
        parts.append(P)
    return torch.cat(parts)


def run_point(dist, nmax, batch, dtype, device, args, gen):
    n = sample_sizes(dist, nmax, batch, gen)
    max_n = int(n.max())
    values, nd, od = make_batch(n, dtype, device)
    flops = float((n.double() ** 3).sum() / 3)
    T = lambda fn: time_ms(lambda _: fn(), 1, device, warmup=args.warmup, reps=args.reps)
    rec = dict(dist=dist, nmax=nmax, batch=batch, dtype=str(dtype).replace("torch.", ""),
               mean_n=float(n.double().mean()))
    ops = torch.ops.batchchol
    rec["ours_ms"] = T(lambda: ops.potrf_vbatched(values, nd, od, max_n, False))
    for fam in FAMILIES:
        os.environ["BATCHCHOL_VBATCHED_KERNEL"] = fam
        rec[f"{fam}_ms"] = T(lambda: ops.potrf_vbatched(values, nd, od, max_n, False))
    os.environ.pop("BATCHCHOL_VBATCHED_KERNEL", None)
    buckets = buckets_of(values, n, od, device)
    rec["bucketed_ms"] = T(lambda: [torch.linalg.cholesky_ex(b) for b in buckets.values()])
    # Padding goes to the largest size drawn (384 +- 200 exceeds Nmax = 512).
    pad_n = max(nmax, max_n)
    pad_bytes = batch * pad_n * pad_n * values.element_size()
    padded = None
    if pad_bytes * 3 < args.mem_limit:
        padded = padded_of(buckets, pad_n, dtype, device)
        rec["padded_ms"] = T(lambda: torch.linalg.cholesky_ex(padded))
    else:
        rec["padded_ms"] = None
    best = min(x for x in (rec["bucketed_ms"], rec["padded_ms"]) if x is not None)
    rec["speedup"] = best / rec["ours_ms"]
    rec["useful_gflops"] = flops / (rec["ours_ms"] * 1e6)
    if dist in ("uniform", "equal"):
        neq = max(1, round(float((n.double() ** 3).mean()) ** (1 / 3)))
        Af = torch.eye(neq, dtype=dtype, device=device) * (neq + 1) + torch.rand(
            batch, neq, neq, dtype=dtype, device=device)
        ms = T(lambda: ops.potrf(Af, False))
        rec["fixed_n"], rec["fixed_gflops"] = neq, batch * neq**3 / 3 / (ms * 1e6)
        rec["vs_fixed"] = rec["useful_gflops"] / rec["fixed_gflops"]
        del Af
    # posv with one right-hand side
    b = torch.rand(int(n.sum()), dtype=dtype, device=device)
    boff = (nd.cumsum(0) - nd)
    rec["posv_ms"] = T(lambda: ops.posv_vbatched(values, nd, od, b, boff, 1, max_n, False))
    bb = {s: torch.rand(st.shape[0], s, 1, dtype=dtype, device=device) for s, st in buckets.items()}

    def bucket_posv():
        for s, st in buckets.items():
            L, _ = torch.linalg.cholesky_ex(st)
            torch.cholesky_solve(bb[s], L)

    rec["posv_bucketed_ms"] = T(bucket_posv)
    if padded is not None:
        pb = torch.rand(padded.shape[0], pad_n, 1, dtype=dtype, device=device)
        rec["posv_padded_ms"] = T(
            lambda: torch.cholesky_solve(pb, torch.linalg.cholesky_ex(padded)[0]))
    else:
        rec["posv_padded_ms"] = None
    best = min(x for x in (rec["posv_bucketed_ms"], rec["posv_padded_ms"]) if x is not None)
    rec["posv_speedup"] = best / rec["posv_ms"]
    return rec


def points(args):
    for nmax in args.nmax:
        for dist in args.dists:
            if dist.startswith("384") and nmax != 512:
                continue
            for batch in args.batches:
                if nmax == 512 and batch > 5000 and not args.big:
                    continue  # 50,000 matrices of up to 512^2 exceed the GPU's memory
                for dtype in args.dtypes:
                    yield dist, nmax, batch, dtype


def bar_axes(n_records):
    """(plt, fig, two stacked axes) for one bar per benchmark point."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 1, figsize=(max(8, 0.35 * n_records), 8))
    return plt, fig, axes


def save_bars(plt, fig, axes, labels, path):
    """Log-scale speedup axes with one labelled tick per point, saved to path."""
    for ax in axes:
        ax.set_yscale("log")
        ax.set_xticks(list(range(len(labels))))
        ax.set_xticklabels(labels, rotation=90, fontsize=7)
        ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    log(f"wrote {path}")


def plot(path, records):
    plt, fig, axes = bar_axes(len(records))
    labels = [f"{r['dist']} N{r['nmax']} b{r['batch']} {r['dtype'][5:]}" for r in records]
    x = range(len(records))
    axes[0].bar(x, [r["speedup"] for r in records], color="tab:blue")
    axes[0].set_ylabel("potrf speedup vs best workaround")
    axes[1].bar(x, [r["posv_speedup"] for r in records], color="tab:orange")
    axes[1].set_ylabel("posv speedup vs best workaround")
    for ax in axes:
        ax.axhline(5.0, color="gray", lw=0.8, ls="--")
    save_bars(plt, fig, axes, labels, path)


def add_sweep_args(p, nmax, dists, dists_help=None):
    """The sweep options both ragged benchmarks take."""
    p.add_argument("--nmax", default=nmax)
    p.add_argument("--batches", default="5000,50000")
    p.add_argument("--dtypes", default="float32,float64")
    p.add_argument("--dists", default=dists, help=dists_help)
    p.add_argument("--quick", action="store_true", help="tiny sweep (smoke test)")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--json", default=None)
    p.add_argument("--plot", default=None)


def parse_sweep(args, script):
    """Lists from the sweep options, and the CUDA device (exits without one)."""
    if not torch.cuda.is_available():
        raise SystemExit(f"{script} times GPU kernels: no CUDA device")
    args.nmax = [int(x) for x in args.nmax.split(",")]
    args.batches = [int(x) for x in args.batches.split(",")]
    args.dtypes = [getattr(torch, d) for d in args.dtypes.split(",")]
    args.dists = args.dists.split(",")
    device = torch.device("cuda")
    args.mem_limit = torch.cuda.get_device_properties(device).total_memory * 0.5
    return device


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_sweep_args(p, "32,128,512", "uniform,skewed,gaussian,384+-0,384+-100,384+-200",
                   "size distributions (384+-r only at Nmax = 512; 'equal': all at Nmax)")
    p.add_argument("--big", action="store_true", help="also 50,000 matrices at Nmax = 512")
    args = p.parse_args()
    device = parse_sweep(args, "bench_vbatched.py")
    if args.quick:
        args.nmax, args.batches, args.dtypes = [32, 128], [500], [torch.float64]
    gen = torch.Generator().manual_seed(0)
    todo = list(points(args))
    records = []
    for i, (dist, nmax, batch, dtype) in enumerate(todo):
        log(f"[{i + 1}/{len(todo)}] {dist} Nmax={nmax} batch={batch} {dtype}")
        rec = run_point(dist, nmax, batch, dtype, device, args, gen)
        records.append(rec)
        log("    " + ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                              for k, v in rec.items()))
        if args.json:  # partial results survive an interrupted sweep
            write_json(args.json, environment(device), {}, records)
        torch.cuda.empty_cache()
    cols = [("dist", 10, ""), ("Nmax", 6, ""), ("batch", 7, ""), ("dtype", 9, ""),
            ("ours", 9, ".3f"), ("warp", 9, ".3f"), ("regs", 9, ".3f"), ("shared", 9, ".3f"),
            ("greedy", 9, ".3f"), ("lazy", 9, ".3f"), ("binned", 9, ".3f"), ("tile", 9, ".3f"),
            ("tile1", 9, ".3f"), ("bucket", 9, ".3f"), ("padded", 9, ".3f"), ("speedup", 8, ".1f"),
            ("vs_fix", 7, ".2f"), ("posv", 9, ".3f"), ("p_bkt", 9, ".3f"), ("p_pad", 9, ".3f"),
            ("p_spd", 7, ".1f")]
    rows = [[r["dist"], r["nmax"], r["batch"], r["dtype"], r["ours_ms"], r.get("warp_ms"),
             r["registers_ms"], r["shared_ms"], r["greedy_ms"], r["lazy_ms"], r["binned_ms"],
             r["tile_ms"], r["tile-one_ms"], r["bucketed_ms"], r["padded_ms"],
             r["speedup"], r.get("vs_fixed"), r["posv_ms"], r["posv_bucketed_ms"],
             r["posv_padded_ms"], r["posv_speedup"]] for r in records]
    print(format_table("potrf_vbatched / posv_vbatched (ms; speedup = best workaround / ours; "
                       "vs_fix = useful GFLOP/s / fixed-size potrf at equal mean work)",
                       cols, rows))
    env = environment(device)
    if args.json:
        write_json(args.json, env, {}, records)
    if args.plot:
        plot(args.plot, records)


if __name__ == "__main__":
    main()
