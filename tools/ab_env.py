"""A/B of a kernel variant behind an environment switch, in one process (GPU).

    ZZ_VARIANT is read by a temporary switch in the launcher under test, e.g.
        if (std::getenv("ZZ_VARIANT") != nullptr) return launch(new_kernel, ...);
    python3 tools/ab_env.py ZZ_VARIANT potrf:float64:32 posv:float32:64 --rounds 4
    python3 tools/ab_env.py BATCHCHOL_BLOCKED_LEFT potrf:float32:512 --arms 0,1

Each case is op:dtype:n[:batch] with op potrf (lower) or posv (posv_solve, one right-hand
side), bench_fixed's inputs and batch (unless given: potrf:float64:512:50 times a call
bound by its chain of launches), or vpotrf:dtype:dist:nmax:batch, potrf_vbatched on
bench_vbatched's batch of that size distribution (seed 0; max_n given, metadata on the GPU;
vposv: posv_vbatched with one right-hand side):
    python3 tools/ab_env.py BATCHCHOL_RAGGED_LISTED vpotrf:float64:skewed:512:5000 --arms ,0
(an empty value in --arms: unset). The two arms alternate for --rounds rounds (CUDA events,
benchmarks/common.median_ms each), so the machine's drift hits both alike; the table
shows the best round of each arm (lower factor; "old": switch unset, "new": set to 1, or the
two values of --arms) and whether both
arms' outputs agree bit for bit, for the lower and the upper factor. Device-host timing
differs between machines of one kind by more than most changes: compare arms of one run.
"""

import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
import common  # noqa: E402
from bench_fixed import cost, default_batch, make_spd  # noqa: E402
from bench_vbatched import make_batch, sample_sizes  # noqa: E402

import torch_batchchol  # noqa: F401,E402

ops = torch.ops.batchchol


def calls(op, A, upper):
    if op == "potrf":
        return lambda: ops.potrf(A, upper)
    b = torch.randn(A.shape[0], A.shape[-1], 1, dtype=A.dtype, device=A.device)
    return lambda: ops.posv_solve(A, b, upper)


def with_env(var, value, fn):
    """fn() with var set to value (None: unset), restored afterwards."""
    if value is None:
        return fn()
    os.environ[var] = value
    try:
        return fn()
    finally:
        del os.environ[var]


def same_outputs(var, arms, fn):
    """Whether fn's outputs under the two arms agree bit for bit (NaN too)."""
    first = with_env(var, arms[0], fn)
    second = with_env(var, arms[1], fn)
    return all(torch.equal(x.nan_to_num(7.0), y.nan_to_num(7.0)) for x, y in zip(first, second))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("var", help="the environment variable the switch reads")
    ap.add_argument("cases", nargs="+",
                    help="op:dtype:n[:batch] (op: potrf | posv) or "
                         "vpotrf|vposv:dtype:dist:nmax:batch")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--arms", default=None,
                    help="OLD,NEW: the switch's values for the two arms (default: unset, 1)")
    args = ap.parse_args()
    arms = tuple(a or None for a in args.arms.split(",")) if args.arms else (None, "1")
    if len(arms) != 2:
        sys.exit("--arms takes two values, OLD,NEW")
    if args.var in os.environ:
        sys.exit(f"unset {args.var} first: the script sets it for the 'new' arm")
    dev = torch.device("cuda")
    bw = common.copy_bandwidth(dev)
    print(f"device {torch.cuda.get_device_name()} | copy bandwidth {bw / 1e9:.1f} GB/s | "
          f"{args.rounds} rounds, best of each arm", flush=True)
    print(f"{'case':32s} {'batch':>8s} {'old ms':>9s} {'new ms':>9s} {'old/new':>8s} "
          f"{'roofline':>9s}  same (lower, upper)")
    for case in args.cases:
        op, dname, *rest = case.split(":")
        ragged = op in ("vpotrf", "vposv")
        arity = (3,) if ragged else (1, 2)
        if op not in ("potrf", "posv", "vpotrf", "vposv") or len(rest) not in arity:
            sys.exit(f"bad case {case!r}: op:dtype:n[:batch] or vpotrf|vposv:dtype:dist:nmax:batch")
        dtype = getattr(torch, dname)
        if ragged:
            dist, nmax, batch = rest[0], int(rest[1]), int(rest[2])
            sizes = sample_sizes(dist, nmax, batch, torch.Generator().manual_seed(0))
            A, nd, od = make_batch(sizes, dtype, dev)
            max_n = int(sizes.max())

            b = torch.rand(int(sizes.sum()), dtype=dtype, device=dev)
            boff = nd.cumsum(0) - nd

            def vcall(up, A=A, nd=nd, od=od, max_n=max_n, b=b, boff=boff):
                if op == "vposv":
                    return lambda: ops.posv_vbatched(A, nd, od, b, boff, 1, max_n, up)
                return lambda: ops.potrf_vbatched(A, nd, od, max_n, up)

            lower, upper = vcall(False), vcall(True)
        else:
            n = int(rest[0])
            batch = int(rest[1]) if len(rest) == 2 else default_batch(op, n, dtype)
            A = make_spd(batch, n, dtype, dev)
            lower, upper = calls(op, A, False), calls(op, A, True)
        same = (same_outputs(args.var, arms, lower), same_outputs(args.var, arms, upper))
        old, new = [], []
        for _ in range(args.rounds):
            old.append(with_env(args.var, arms[0], lambda: common.median_ms(lower)))
            new.append(with_env(args.var, arms[1], lambda: common.median_ms(lower)))
        roof = "-"
        if not ragged:
            nbytes, _ = cost(op, n, 1, A.element_size())
            roof = f"{nbytes * batch / bw * 1e3 / min(new):.2f}"
        print(f"{case:32s} {batch:8d} {min(old):9.4f} {min(new):9.4f} {min(old) / min(new):8.3f} "
              f"{roof:>9s}  {same}", flush=True)
        del A
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
