"""Extra include directories for CUDA builds (used by setup.py and dev_build.py).

ATen/cuda/CUDAContext.h includes the cuBLAS/cuSOLVER/cuSPARSE headers. A bare CUDA
toolkit (nvcc + cudart only, as on the CI machine) lacks them; the nvidia-* wheels
that a pip-installed CUDA build of torch runs on ship them.
"""

import glob
import os


def extra_cuda_include_dirs(cuda_home):
    toolkit_inc = os.path.join(cuda_home or "", "include")
    try:
        import nvidia  # namespace package of the nvidia-* wheels

        roots = list(nvidia.__path__)
    except ImportError:
        roots = []
    dirs = []
    for header in ("cublas_v2.h", "cusolverDn.h", "cusparse.h"):
        if os.path.exists(os.path.join(toolkit_inc, header)):
            continue
        for root in roots:
            for found in glob.glob(os.path.join(root, "*", "include", header)):
                d = os.path.dirname(found)
                if d not in dirs:
                    dirs.append(d)
    return dirs
