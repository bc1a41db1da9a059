"""``gemm`` on CUDA arrays: reads each array's pointer, shape, strides, dtype and device
(torch directly, else ``__cuda_array_interface__``, else DLPack), maps the row- or column-major
product onto the runtime's column-major BLAS call and launches on the array's current stream.
Everything is checked before anything is launched."""

from __future__ import annotations

import sys
from typing import Any, Optional

from . import _gemmtune

# Precision letter of each element type, by name (torch.float32 prints as "torch.float32",
# NumPy's and CuPy's dtypes as "float32").
_PRECISIONS = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}
# FP16 and BF16 inputs run on tensor cores into a float32 C (precisions h and b), as float32
# inputs do with tf32=True (t). Not in the C++ short path, which takes the four above.
_TENSOR_CORE = {"float16": "h", "bfloat16": "b"}
_TYPESTR = {"<f4": "float32", "<f8": "float64", "<c8": "complex64", "<c16": "complex128",
            "<f2": "float16"}
_ITEMSIZE = {"float32": 4, "float64": 8, "complex64": 8, "complex128": 16, "float16": 2,
             "bfloat16": 2}
_SUPPORTED = "float32, float64, complex64, complex128, float16 or bfloat16"


# A matrix as gemm reads it: (pointer, rows, cols, row stride, column stride (elements), dtype
# name, CUDA device, library). A plain tuple: gemm's host time is the point.
_Matrix = tuple


_torch_dtypes: dict[Any, str] = {}


def _torch_matrix(x: Any, name: str) -> _Matrix:
    if not x.is_cuda:
        raise ValueError(f"{name} is a torch tensor on {x.device}; expected a CUDA tensor")
    dtype = _torch_dtypes.get(x.dtype)
    if dtype is None:
        dtype = str(x.dtype).removeprefix("torch.")
        if dtype not in _PRECISIONS and dtype not in _TENSOR_CORE:
            raise ValueError(f"{name} has dtype torch.{dtype}; expected {_SUPPORTED}")
        _torch_dtypes[x.dtype] = dtype
    if x.dim() != 2:
        raise ValueError(f"{name} has {x.dim()} dimensions (shape {tuple(x.shape)}); expected a "
                         "2-D matrix")
    rows, cols = x.shape
    s0, s1 = x.stride()
    return (x.data_ptr(), rows, cols, s0, s1, dtype, x.get_device(), "torch")


def _interface_matrix(x: Any, name: str, cai: dict) -> _Matrix:
    dtype = _TYPESTR.get(cai["typestr"])
    if dtype is None:
        raise ValueError(f"{name} has element type {cai['typestr']}; expected {_SUPPORTED}")
    shape = tuple(cai["shape"])
    if len(shape) != 2:
        raise ValueError(f"{name} has {len(shape)} dimensions (shape {shape}); expected a 2-D "
                         "matrix")
    size = _ITEMSIZE[dtype]
    strides = cai.get("strides")
    if strides is None:  # C-contiguous
        s0, s1 = shape[1], 1
    else:
        if strides[0] % size or strides[1] % size:
            raise ValueError(f"{name} has strides {tuple(strides)} bytes, not whole elements of "
                             f"{size} bytes")
        s0, s1 = strides[0] // size, strides[1] // size
    ptr = cai["data"][0]
    device = getattr(getattr(x, "device", None), "id", None)
    if device is None:
        device = _gemmtune.pointer_device(ptr)
    return (ptr, shape[0], shape[1], s0, s1, dtype, device, type(x).__module__)


def _dlpack_matrix(x: Any, name: str) -> _Matrix:
    ptr, shape, strides, dtype, device_type, device = _gemmtune.dlpack_matrix(x)
    if device_type != 2:  # kDLCUDA
        raise ValueError(f"{name} is not on a CUDA device (DLPack device type {device_type}); "
                         "expected a CUDA array")
    if dtype not in _PRECISIONS and dtype not in _TENSOR_CORE:
        raise ValueError(f"{name} has dtype {dtype}; expected {_SUPPORTED}")
    if len(shape) != 2:
        raise ValueError(f"{name} has {len(shape)} dimensions (shape {tuple(shape)}); expected a "
                         "2-D matrix")
    return (ptr, shape[0], shape[1], strides[0], strides[1], dtype, device, "dlpack")


def _matrix(x: Any, name: str) -> _Matrix:
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return _torch_matrix(x, name)
    cai = getattr(x, "__cuda_array_interface__", None)
    if cai is not None:
        return _interface_matrix(x, name, cai)
    if hasattr(x, "__dlpack__"):
        return _dlpack_matrix(x, name)
    raise ValueError(f"{name} is a {type(x).__module__}.{type(x).__name__}, not a CUDA array; "
                     "expected a torch tensor, a CuPy array or an array with DLPack or "
                     "__cuda_array_interface__ on a CUDA device")


def _layout(x: _Matrix, name: str) -> tuple[bool, int]:
    """(transposed, ld): the column-major matrix the runtime sees is x itself (False) or its
    transpose (True), with leading dimension ld. A dimension of size 1 has any stride."""
    _, rows, cols, s0, s1 = x[:5]
    if s1 == 1 and s0 >= cols > 0:  # row-major, the common case first
        return True, s0
    if (s0 == 1 or rows == 1) and (s1 >= max(1, rows) or cols == 1):
        return False, max(s1 if cols > 1 else rows, 1)
    if (s1 == 1 or cols == 1) and (s0 >= max(1, cols) or rows == 1):
        return True, max(s0 if rows > 1 else cols, 1)
    raise ValueError(f"{name} has strides ({s0}, {s1}) elements for shape ({rows}, {cols}); "
                     "expected one of them 1 and the other at least the extent of the other "
                     "dimension (a row- or column-major view; make it .contiguous() first)")


_torch_stream: Any = None  # torch's current-stream getter, found on first use


def _current_stream(x: _Matrix, original: Any) -> int:
    library = x[7]
    if library == "torch":
        return (_torch_stream or _find_torch_stream())(x[6])
    if library.startswith("cupy"):
        return sys.modules["cupy"].cuda.get_current_stream().ptr
    cai = getattr(original, "__cuda_array_interface__", None)
    stream = cai.get("stream") if cai else None
    # The interface's 1 is the legacy default stream (null); 2 is the per-thread one, whose
    # handle is 2 as well.
    return 0 if stream in (None, 1) else stream


def _scalar(value: Any, name: str, precision: str) -> tuple[float, float]:
    if type(value) is int or type(value) is float:
        return float(value), 0.0
    z = complex(value)
    if z.imag and precision in "sdhbt":
        raise ValueError(f"{name} = {value} is complex; the arrays are real")
    return z.real, z.imag


def _scalars(alpha: Any, beta: Any, precision: str) -> tuple[float, float, float, float]:
    if type(alpha) in _REAL and type(beta) in _REAL:  # the usual 1 and 0, in one call
        return float(alpha), 0.0, float(beta), 0.0
    return (*_scalar(alpha, "alpha", precision), *_scalar(beta, "beta", precision))


_REAL = {int, float}


def gemm(a: Any, b: Any, c: Optional[Any] = None, alpha: complex = 1, beta: complex = 0,
         trans_a: bool = False, trans_b: bool = False, tf32: bool = False) -> Any:
    """``c = alpha * op(a) @ op(b) + beta * c`` with op the transpose where asked, on the arrays'
    device and current stream, asynchronously; returns ``c`` (a new array of a's kind, for
    torch and CuPy, when None). Real and complex, single and double precision; float16 and
    bfloat16 inputs on tensor cores with a float32 ``c`` and FP32 accumulation, and float32 inputs
    rounded to TF32 there with ``tf32=True``; row- and column-major views of any leading
    dimension. A ``ValueError`` names the array at fault (host memory, dtype, shape, device,
    strides) before anything runs."""
    if not tf32 and (_torch_module is not None or _register_torch() is not None):
        done = _gemmtune.torch_gemm(a, b, c, alpha, beta, trans_a, trans_b)
        if done is not None:
            return done
    return _general(a, b, c, alpha, beta, trans_a, trans_b, tf32)


_torch_module: Any = None  # torch, once registered with the C++ short path


def _register_torch(launch: Any = None) -> Any:
    """Hands torch's Tensor type, dtypes and current-stream getter to the C++ short path for plain
    row-major tensors (each attribute read from Python would cost as much as the read itself);
    None while torch is not imported. ``launch`` (tests) receives the launch's arguments in place
    of the runtime."""
    global _torch_module
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    _gemmtune.torch_register(torch.Tensor,
                             [(getattr(torch, name), letter) for name, letter in
                              _PRECISIONS.items()], _find_torch_stream(), launch)
    _torch_module = torch
    return torch


def _find_torch_stream() -> Any:
    global _torch_stream
    torch = sys.modules["torch"]
    # The raw handle without building a Stream object (what Triton's launcher reads).
    _torch_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None) or (
        lambda device: torch.cuda.current_stream(device).cuda_stream)
    return _torch_stream


def _general(a: Any, b: Any, c: Optional[Any], alpha: Any, beta: Any, trans_a: bool,
             trans_b: bool, tf32: bool = False) -> Any:
    """gemm on any arrays: every layout, every library, and every check's message."""
    ma, mb = _matrix(a, "a"), _matrix(b, "b")
    _, a_rows, a_cols, _, _, dtype, device, _ = ma
    b_rows, b_cols = mb[1], mb[2]
    m, k = (a_cols, a_rows) if trans_a else (a_rows, a_cols)
    kb, n = (b_cols, b_rows) if trans_b else (b_rows, b_cols)
    if kb != k:
        raise ValueError(f"b has shape ({b_rows}, {b_cols}){' transposed' if trans_b else ''}; "
                         f"expected {k} rows to match a's {k} columns"
                         f"{' transposed' if trans_a else ''}")
    if mb[5] != dtype:
        raise ValueError(f"b has dtype {mb[5]}; expected a's {dtype}")
    if mb[6] != device:
        raise ValueError(f"b is on CUDA device {mb[6]}; expected a's device {device}")
    precision = _TENSOR_CORE.get(dtype) or _PRECISIONS[dtype]
    if tf32:
        if dtype != "float32":
            raise ValueError(f"a has dtype {dtype}; tf32=True takes float32 arrays")
        precision = "t"
    # Tensor-core inputs accumulate and store in float32.
    c_dtype = "float32" if precision in "hbt" else dtype
    alpha_re, alpha_im, beta_re, beta_im = _scalars(alpha, beta, precision)
    if c is None:
        c = _new_like(a, ma, m, n, c_dtype)
        beta_re = beta_im = 0.0
    mc = _matrix(c, "c")
    if mc[1] != m or mc[2] != n:
        raise ValueError(f"c has shape ({mc[1]}, {mc[2]}); expected ({m}, {n})")
    if mc[5] != c_dtype:
        raise ValueError(f"c has dtype {mc[5]}; expected a's {dtype}" if c_dtype == dtype else
                         f"c has dtype {mc[5]}; expected float32 (a's {dtype} accumulates in "
                         "float32 on tensor cores)")
    if mc[6] != device:
        raise ValueError(f"c is on CUDA device {mc[6]}; expected a's device {device}")
    # Kernels read A and B in vectors of up to 16 bytes from the base pointer on; C's alignment
    # is checked by the kernel itself.
    if ma[0] % 16 or mb[0] % 16:
        name, ptr = ("a", ma[0]) if ma[0] % 16 else ("b", mb[0])
        raise ValueError(f"{name} starts at address {ptr:#x}, not a multiple of 16 bytes (a view "
                         "at an offset); expected an aligned array (pass a copy, .clone() or "
                         ".copy())")
    ta, lda = _layout(ma, "a")
    tb, ldb = _layout(mb, "b")
    tc, ldc = _layout(mc, "c")
    if m == 0 or n == 0:
        return c
    # The runtime computes column-major C = op(A) op(B). A row-major c is the transpose of a
    # column-major one: C^T = op(B)^T op(A)^T, so the operands swap.
    if tc:
        _gemmtune.gemm(precision, "n" if tb != trans_b else "t", "n" if ta != trans_a else "t",
                       n, m, k, alpha_re, alpha_im, mb[0], ldb, ma[0], lda, beta_re, beta_im,
                       mc[0], ldc, _current_stream(ma, a), device)
    else:
        _gemmtune.gemm(precision, "t" if ta != trans_a else "n", "t" if tb != trans_b else "n",
                       m, n, k, alpha_re, alpha_im, ma[0], lda, mb[0], ldb, beta_re, beta_im,
                       mc[0], ldc, _current_stream(ma, a), device)
    return c


def _new_like(a: Any, ma: _Matrix, m: int, n: int, dtype: str) -> Any:
    library, device = ma[7], ma[6]
    if library == "torch":
        torch = sys.modules["torch"]
        return torch.empty((m, n), dtype=getattr(torch, dtype), device=a.device)
    if library.startswith("cupy"):
        cupy = sys.modules["cupy"]
        with cupy.cuda.Device(device):
            return cupy.empty((m, n), dtype=dtype)
    raise ValueError("c is None and a is neither a torch tensor nor a CuPy array; pass c, an "
                     f"({m}, {n}) {dtype} array on CUDA device {device}")
