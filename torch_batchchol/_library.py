"""Loads the compiled operator library so that torch.ops.batchchol.* exist.

TORCH_BATCHCHOL_LIBRARY=/path/to/lib.so loads a library built elsewhere (for
example by tools/dev_build.py) instead of the installed torch_batchchol._C.
"""

import os

import torch


def _load() -> str:
    path = os.environ.get("TORCH_BATCHCHOL_LIBRARY")
    if path:
        torch.ops.load_library(path)
        return path
    from . import _C  # noqa: F401  (registers the ops on import)

    return _C.__file__


LIBRARY_PATH = _load()

from . import _fake  # noqa: E402,F401  (Python fake kernels of the ragged ops)


def cuda_kernels_built() -> bool:
    """True when the loaded library holds the CUDA kernels."""
    return torch._C._dispatch_has_kernel_for_dispatch_key("batchchol::potrf", "CUDA")
