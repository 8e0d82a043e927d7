"""Builds the operator library into a private directory, for development.

    python tools/dev_build.py --build-dir /tmp/bc-cpu            # CPU only
    python tools/dev_build.py --build-dir /tmp/bc-cuda --cuda    # with CUDA kernels

prints the path of the shared library; run tests against it with
TORCH_BATCHCHOL_LIBRARY=<path> pytest tests. Several builds can coexist, which
`pip install -e .` (one in-place _C per checkout) does not allow.
"""

import argparse
import glob
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--cuda", action="store_true")
    parser.add_argument("--name", default="batchchol_dev")
    args = parser.parse_args()

    from torch.utils.cpp_extension import CUDA_HOME, load

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from cuda_includes import extra_cuda_include_dirs

    os.makedirs(args.build_dir, exist_ok=True)
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0")
    srcs = sorted(glob.glob(os.path.join(ROOT, "csrc", "**", "*.cpp"), recursive=True))
    cflags = ["-O3", "-fopenmp"]
    if args.cuda:
        srcs += sorted(glob.glob(os.path.join(ROOT, "csrc", "cuda", "*.cu")))
        cflags.append("-DBATCHCHOL_WITH_CUDA")
    load(
        name=args.name,
        sources=srcs,
        extra_include_paths=[os.path.join(ROOT, "csrc")]
        + (extra_cuda_include_dirs(CUDA_HOME) if args.cuda else []),
        extra_cflags=cflags,
        extra_cuda_cflags=["-O3", "--expt-relaxed-constexpr", "-lineinfo", "-DBATCHCHOL_WITH_CUDA"],
        extra_ldflags=["-fopenmp"],
        with_cuda=args.cuda,
        build_directory=args.build_dir,
        is_python_module=False,
        verbose=False,
    )
    so = os.path.join(args.build_dir, args.name + ".so")
    print(so)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
