"""``gemm`` on CUDA arrays: reads each array's pointer, shape, strides, dtype and device
(torch directly, else ``__cuda_array_interface__``, else DLPack), maps the row- or column-major
product onto the runtime's column-major BLAS call and launches on the array's current stream.
Everything is checked before anything is launched."""

from __future__ import annotations

import sys
from typing import Any, NamedTuple, Optional

from . import _gemmtune

# Precision letter of each element type, by name (torch.float32 prints as "torch.float32",
# NumPy's and CuPy's dtypes as "float32").
_PRECISIONS = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}
_TYPESTR = {"<f4": "float32", "<f8": "float64", "<c8": "complex64", "<c16": "complex128"}
_ITEMSIZE = {"float32": 4, "float64": 8, "complex64": 8, "complex128": 16}
_SUPPORTED = "float32, float64, complex64 or complex128"


class _Matrix(NamedTuple):
    ptr: int
    rows: int
    cols: int
    row_stride: int  # in elements
    col_stride: int
    dtype: str
    device: int
    library: str


_torch_dtypes: dict[Any, str] = {}


def _torch_matrix(x: Any, name: str) -> _Matrix:
    if not x.is_cuda:
        raise ValueError(f"{name} is a torch tensor on {x.device}; expected a CUDA tensor")
    dtype = _torch_dtypes.get(x.dtype)
    if dtype is None:
        dtype = str(x.dtype).removeprefix("torch.")
        if dtype not in _PRECISIONS:
            raise ValueError(f"{name} has dtype torch.{dtype}; expected {_SUPPORTED}")
        _torch_dtypes[x.dtype] = dtype
    if x.dim() != 2:
        raise ValueError(f"{name} has {x.dim()} dimensions (shape {tuple(x.shape)}); expected a "
                         "2-D matrix")
    rows, cols = x.shape
    s0, s1 = x.stride()
    return _Matrix(x.data_ptr(), rows, cols, s0, s1, dtype, x.get_device(), "torch")


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
    return _Matrix(ptr, shape[0], shape[1], s0, s1, dtype, device, type(x).__module__)


def _dlpack_matrix(x: Any, name: str) -> _Matrix:
    ptr, shape, strides, dtype, device_type, device = _gemmtune.dlpack_matrix(x)
    if device_type != 2:  # kDLCUDA
        raise ValueError(f"{name} is not on a CUDA device (DLPack device type {device_type}); "
                         "expected a CUDA array")
    if dtype not in _PRECISIONS:
        raise ValueError(f"{name} has dtype {dtype}; expected {_SUPPORTED}")
    if len(shape) != 2:
        raise ValueError(f"{name} has {len(shape)} dimensions (shape {tuple(shape)}); expected a "
                         "2-D matrix")
    return _Matrix(ptr, shape[0], shape[1], strides[0], strides[1], dtype, device, "dlpack")


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
    if (x.row_stride == 1 or x.rows == 1) and (x.col_stride >= max(1, x.rows) or x.cols == 1):
        return False, max(x.col_stride if x.cols > 1 else x.rows, 1)
    if (x.col_stride == 1 or x.cols == 1) and (x.row_stride >= max(1, x.cols) or x.rows == 1):
        return True, max(x.row_stride if x.rows > 1 else x.cols, 1)
    raise ValueError(f"{name} has strides ({x.row_stride}, {x.col_stride}) elements for shape "
                     f"({x.rows}, {x.cols}); expected one of them 1 and the other at least the "
                     "extent of the other dimension (a row- or column-major view; make it "
                     ".contiguous() first)")


_torch_stream: Any = None  # torch's current-stream getter, found on first use


def _current_stream(x: _Matrix, original: Any) -> int:
    global _torch_stream
    if x.library == "torch":
        if _torch_stream is None:
            torch = sys.modules["torch"]
            # The raw handle without building a Stream object (what Triton's launcher reads).
            _torch_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None) or (
                lambda device: torch.cuda.current_stream(device).cuda_stream)
        return _torch_stream(x.device)
    if x.library.startswith("cupy"):
        return sys.modules["cupy"].cuda.get_current_stream().ptr
    cai = getattr(original, "__cuda_array_interface__", None)
    stream = cai.get("stream") if cai else None
    # The interface's 1 is the legacy default stream (null); 2 is the per-thread one, whose
    # handle is 2 as well.
    return 0 if stream in (None, 1) else stream


def _scalar(value: Any, name: str, precision: str) -> tuple[float, float]:
    z = complex(value)
    if z.imag and precision in "sd":
        raise ValueError(f"{name} = {value} is complex; the arrays are real")
    return z.real, z.imag


def gemm(a: Any, b: Any, c: Optional[Any] = None, alpha: complex = 1, beta: complex = 0,
         trans_a: bool = False, trans_b: bool = False) -> Any:
    """``c = alpha * op(a) @ op(b) + beta * c`` with op the transpose where asked, on the arrays'
    device and current stream, asynchronously; returns ``c`` (a new array of a's kind, for
    torch and CuPy, when None). Real and complex, single and double precision; row- and
    column-major views of any leading dimension. A ``ValueError`` names the array at fault
    (host memory, dtype, shape, device, strides) before anything runs."""
    ma, mb = _matrix(a, "a"), _matrix(b, "b")
    m, k = (ma.cols, ma.rows) if trans_a else (ma.rows, ma.cols)
    kb, n = (mb.cols, mb.rows) if trans_b else (mb.rows, mb.cols)
    if kb != k:
        raise ValueError(f"b has shape ({mb.rows}, {mb.cols}){' transposed' if trans_b else ''}; "
                         f"expected {k} rows to match a's {k} columns"
                         f"{' transposed' if trans_a else ''}")
    if mb.dtype != ma.dtype:
        raise ValueError(f"b has dtype {mb.dtype}; expected a's {ma.dtype}")
    if mb.device != ma.device:
        raise ValueError(f"b is on CUDA device {mb.device}; expected a's device {ma.device}")
    precision = _PRECISIONS[ma.dtype]
    alpha_re, alpha_im = _scalar(alpha, "alpha", precision)
    beta_re, beta_im = _scalar(beta, "beta", precision)
    if c is None:
        c = _new_like(a, ma, m, n)
        beta_re = beta_im = 0.0
    mc = _matrix(c, "c")
    if (mc.rows, mc.cols) != (m, n):
        raise ValueError(f"c has shape ({mc.rows}, {mc.cols}); expected ({m}, {n})")
    if mc.dtype != ma.dtype:
        raise ValueError(f"c has dtype {mc.dtype}; expected a's {ma.dtype}")
    if mc.device != ma.device:
        raise ValueError(f"c is on CUDA device {mc.device}; expected a's device {ma.device}")
    for x, name in ((ma, "a"), (mb, "b")):
        # Kernels read A and B in vectors of up to 16 bytes from the base pointer on; C's
        # alignment is checked by the kernel itself.
        if x.ptr % 16:
            raise ValueError(f"{name} starts at address {x.ptr:#x}, not a multiple of 16 bytes "
                             "(a view at an offset); expected an aligned array (pass a copy, "
                             ".clone() or .copy())")
    ta, lda = _layout(ma, "a")
    tb, ldb = _layout(mb, "b")
    tc, ldc = _layout(mc, "c")
    # The runtime computes column-major C = op(A) op(B). A row-major c is the transpose of a
    # column-major one: C^T = op(B)^T op(A)^T, so the operands swap.
    if tc:
        first, t1, ld1, need1 = mb, tb, ldb, not trans_b
        second, t2, ld2, need2 = ma, ta, lda, not trans_a
        rows, cols = n, m
    else:
        first, t1, ld1, need1 = ma, ta, lda, trans_a
        second, t2, ld2, need2 = mb, tb, ldb, trans_b
        rows, cols = m, n
    if m == 0 or n == 0:
        return c
    _gemmtune.gemm(precision, "t" if t1 != need1 else "n", "t" if t2 != need2 else "n", rows,
                   cols, k, alpha_re, alpha_im, first.ptr, ld1, second.ptr, ld2, beta_re,
                   beta_im, mc.ptr, ldc, _current_stream(ma, a), ma.device)
    return c


def _new_like(a: Any, ma: _Matrix, m: int, n: int) -> Any:
    if ma.library == "torch":
        return sys.modules["torch"].empty((m, n), dtype=a.dtype, device=a.device)
    if ma.library.startswith("cupy"):
        cupy = sys.modules["cupy"]
        with cupy.cuda.Device(ma.device):
            return cupy.empty((m, n), dtype=ma.dtype)
    raise ValueError("c is None and a is neither a torch tensor nor a CuPy array; pass c, an "
                     f"({m}, {n}) {ma.dtype} array on CUDA device {ma.device}")
