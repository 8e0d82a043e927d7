"""Fake (meta) kernels of the ragged-batch ops, for torch.compile and opcheck.

They are Python rather than C++ Meta kernels because a ragged op may take its
metadata (n, offsets) on the CPU and its values on the GPU: FakeTensor cannot infer
one output device for a C++ Meta kernel with non-scalar inputs on two devices, while a
Python fake kernel names the devices itself. The argument checks stay in C++ (the
batchchol::_check_*_args ops, which have no outputs), so fake and real kernels raise
the same errors. The fixed-size ops keep their C++ Meta kernels (csrc/meta/).
"""

import torch

_ops = torch.ops.batchchol


def _like(t):
    return torch.empty_like(t, memory_format=torch.contiguous_format)


def _info(A, n):
    return A.new_empty(n.shape[:1], dtype=torch.int32)


@torch.library.register_fake("batchchol::potrf_vbatched")
def _potrf_vbatched(A, n, offsets, max_n=None, upper=False):
    _ops._check_vbatched_args("potrf_vbatched", A, n, offsets)
    return _like(A), _info(A, n)


@torch.library.register_fake("batchchol::potrs_vbatched")
def _potrs_vbatched(L, n, offsets, B, b_offsets, k, max_n=None, upper=False):
    _ops._check_vbatched_args("potrs_vbatched", L, n, offsets, B, b_offsets, k)
    return _like(B)


@torch.library.register_fake("batchchol::posv_vbatched")
def _posv_vbatched(A, n, offsets, B, b_offsets, k, max_n=None, upper=False):
    _ops._check_vbatched_args("posv_vbatched", A, n, offsets, B, b_offsets, k)
    return _like(B), _like(A), _info(A, n)


@torch.library.register_fake("batchchol::trsm_vbatched")
def _trsm_vbatched(A, n, offsets, B, b_offsets, k, max_n=None, upper=False, left=True,
                   transpose=False, unit_diagonal=False):
    _ops._check_vbatched_args("trsm_vbatched", A, n, offsets, B, b_offsets, k)
    return _like(B)


@torch.library.register_fake("batchchol::_gemm_vbatched")
def _gemm_vbatched(P, p_offsets, p_rows, p_cols, p_conj_trans, Q, q_offsets, q_rows, q_cols,
                   q_conj_trans, n, c_offsets, c_numel, max_n=None):
    _ops._check_gemm_vbatched_args(P, p_offsets, p_rows, p_cols, p_conj_trans, Q, q_offsets,
                                   q_rows, q_cols, q_conj_trans, n, c_offsets)
    return P.new_empty((c_numel,))


@torch.library.register_fake("batchchol::_tri_vbatched")
def _tri_vbatched(X, n, offsets, mode, max_n=None):
    _ops._check_tri_vbatched_args(X, n, offsets, mode)
    return _like(X)
