"""Build of torch_batchchol's C++/CUDA extension (torch_batchchol._C).

CUDA sources are compiled whenever a CUDA toolkit and a CUDA build of torch are
present, even on a machine without a GPU; otherwise a CPU-only build is made.
FORCE_CUDA=1 / FORCE_ONLY_CPU=1 override the detection. TORCH_CUDA_ARCH_LIST
defaults to "9.0" (H100/H200); set it to e.g. "8.0;9.0" for more architectures.
"""

import glob
import os
import sys

# torch takes CUDA_HOME from `which nvcc` when it is unset; an nvcc wrapper script
# in /usr/local/bin (as on this project's machines) then yields /usr/local, which
# holds neither the CUDA headers nor libcudart. Must run before cpp_extension loads.
if not (os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")) and os.path.exists(
    "/usr/local/cuda/bin/nvcc"
):
    os.environ["CUDA_HOME"] = "/usr/local/cuda"

from setuptools import find_packages, setup
from torch.utils.cpp_extension import (
    CUDA_HOME,
    BuildExtension,
    CppExtension,
    CUDAExtension,
)
import torch

ROOT = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from cuda_includes import extra_cuda_include_dirs  # noqa: E402


def _want_cuda() -> bool:
    if os.environ.get("FORCE_ONLY_CPU", "0") == "1":
        return False
    if os.environ.get("FORCE_CUDA", "0") == "1":
        return True
    return torch.version.cuda is not None and CUDA_HOME is not None


def _sources(with_cuda: bool):
    srcs = sorted(glob.glob(os.path.join("csrc", "**", "*.cpp"), recursive=True))
    if with_cuda:
        srcs += sorted(glob.glob(os.path.join("csrc", "cuda", "*.cu")))
    return srcs


def _extension():
    with_cuda = _want_cuda()
    define_macros = [("BATCHCHOL_PYTHON_MODULE", None)]
    cxx = ["-O3", "-fopenmp", "-Wall", "-Wno-unused-function"]
    kwargs = dict(
        name="torch_batchchol._C",
        sources=_sources(with_cuda),
        include_dirs=[os.path.join(ROOT, "csrc")],
        extra_link_args=["-fopenmp"],
    )
    if with_cuda:
        os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0")
        define_macros.append(("BATCHCHOL_WITH_CUDA", None))
        # No --use_fast_math: IEEE division and sqrt are the default (DESIGN-NOTES 3); the
        # factorizations' pivot steps take CUDA's rsqrt (1 ulp float64, 2 float32, no flush;
        # scalar_ops.cuh).
        nvcc = ["-O3", "--expt-relaxed-constexpr", "-lineinfo"]
        kwargs["include_dirs"] += extra_cuda_include_dirs(CUDA_HOME)
        threads = os.environ.get("NVCC_THREADS", "2")
        nvcc.append(f"--threads={threads}")
        return CUDAExtension(
            define_macros=define_macros,
            extra_compile_args={"cxx": cxx, "nvcc": nvcc},
            **kwargs,
        )
    return CppExtension(define_macros=define_macros, extra_compile_args={"cxx": cxx}, **kwargs)


class _BuildExt(BuildExtension.with_options(use_ninja=True)):
    """Keeps object files in build/ so that rebuilds are incremental.

    pip's editable install (PEP 660) compiles in a throwaway temporary directory,
    which would make every `pip install -e .` recompile all sources (slow for the
    CUDA kernels); ninja in a persistent directory recompiles only what changed.
    """

    def finalize_options(self):
        super().finalize_options()
        flavour = "cuda" if _want_cuda() else "cpu"
        self.build_temp = os.path.join(ROOT, "build", f"temp-{flavour}")


setup(
    name="torch_batchchol",
    version="0.1.0",
    description="Batched Cholesky factorization and solves for PyTorch (CPU and CUDA)",
    packages=find_packages(include=["torch_batchchol", "torch_batchchol.*"]),
    ext_modules=[_extension()],
    cmdclass={"build_ext": _BuildExt},
    python_requires=">=3.10",
    install_requires=["torch>=2.11"],
)
