"""gemm's mapping of row- and column-major arrays onto the runtime's column-major call, checked
without a GPU: arrays in host memory pose as CUDA arrays through __cuda_array_interface__ and
the launch is replaced by a column-major GEMM in NumPy on the same addresses."""

import ctypes
from types import SimpleNamespace

import pytest

import gemmtune
from gemmtune import _arrays

np = pytest.importorskip("numpy", reason="the array tests pose NumPy arrays")

DTYPES = {"s": np.float32, "d": np.float64, "c": np.complex64, "z": np.complex128}
# The tensor-core precisions NumPy can pose (no bfloat16): inputs, and their float32 C.
INPUT_DTYPES = {**DTYPES, "h": np.float16, "t": np.float32}
C_DTYPES = {**DTYPES, "h": np.float32, "t": np.float32}


class PosingArray:
    """A host array that says it is CUDA device 0's (the interface's fields only)."""

    def __init__(self, array, stream=None):
        self.array = array
        interface = dict(array.__array_interface__)
        interface["version"] = 3
        if stream is not None:
            interface["stream"] = stream
        self.__cuda_array_interface__ = interface
        self.device = SimpleNamespace(id=0)


def column_major(ptr, rows, cols, ld, dtype):
    item = np.dtype(dtype).itemsize
    size = ((cols - 1) * ld + rows) * item
    buffer = (ctypes.c_char * size).from_address(ptr)
    flat = np.frombuffer(buffer, dtype=dtype)
    return np.lib.stride_tricks.as_strided(flat, (rows, cols), (item, ld * item))


@pytest.fixture
def launches(monkeypatch):
    calls = []

    def fake(precision, op_a, op_b, m, n, k, alpha_re, alpha_im, a, lda, b, ldb, beta_re,
             beta_im, c, ldc, stream, device):
        dtype = C_DTYPES[precision]
        A = column_major(a, *((m, k) if op_a == "n" else (k, m)), lda, INPUT_DTYPES[precision])
        B = column_major(b, *((k, n) if op_b == "n" else (n, k)), ldb, INPUT_DTYPES[precision])
        C = column_major(c, m, n, ldc, dtype)
        op_a_value = A if op_a == "n" else A.T
        op_b_value = B if op_b == "n" else B.T
        C[...] = (complex(alpha_re, alpha_im) * (op_a_value.astype(np.complex128) @
                                                  op_b_value) +
                  complex(beta_re, beta_im) * C).astype(dtype) if precision in "cz" else (
            alpha_re * (op_a_value.astype(np.float64) @ op_b_value) + beta_re * C).astype(dtype)
        calls.append(dict(stream=stream, device=device, ops=op_a + op_b, precision=precision))

    monkeypatch.setattr(_arrays._gemmtune, "gemm", fake)
    return calls


def layouts(rows, cols, dtype, rng):
    """The same values as a row-major, a column-major and a padded row-major array."""
    values = rng.standard_normal((rows, cols)).astype(dtype)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.standard_normal((rows, cols)).astype(dtype)
    column = np.asfortranarray(values)
    padded = np.zeros((rows, cols + 5), dtype=dtype)[:, :cols]
    padded[...] = values
    return {"row": values, "column": column, "padded": padded}


@pytest.mark.parametrize("precision", list(DTYPES))
@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
def test_every_layout_and_transpose_computes_the_product(precision, trans_a, trans_b, launches):
    rng = np.random.default_rng(3)
    dtype = DTYPES[precision]
    m, n, k = 7, 5, 3
    alpha, beta = (1.5 - 0.5j, 0.25j) if precision in "cz" else (1.5, 0.25)
    for la, a in layouts(*((k, m) if trans_a else (m, k)), dtype, rng).items():
        for lb, b in layouts(*((n, k) if trans_b else (k, n)), dtype, rng).items():
            for lc, c in layouts(m, n, dtype, rng).items():
                c0 = c.copy()
                gemmtune.gemm(PosingArray(a), PosingArray(b), PosingArray(c), alpha=alpha,
                              beta=beta, trans_a=trans_a, trans_b=trans_b)
                expected = alpha * ((a.T if trans_a else a).astype(np.complex128) @
                                    (b.T if trans_b else b)) + beta * c0
                tolerance = 1e-4 if precision in "sc" else 1e-12
                assert np.allclose(c, expected, rtol=tolerance, atol=tolerance), (la, lb, lc)
    assert len(launches) == 27


@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
def test_float16_and_tf32_inputs_run_on_tensor_cores_into_float32(trans_a, trans_b, launches):
    rng = np.random.default_rng(5)
    m, n, k = 7, 5, 3
    for precision, inputs, tf32 in (("h", np.float16, False), ("t", np.float32, True)):
        for la, a in layouts(*((k, m) if trans_a else (m, k)), inputs, rng).items():
            for lb, b in layouts(*((n, k) if trans_b else (k, n)), inputs, rng).items():
                c = layouts(m, n, np.float32, rng)["row"]
                c0 = c.copy()
                gemmtune.gemm(PosingArray(a), PosingArray(b), PosingArray(c), alpha=1.5,
                              beta=0.25, trans_a=trans_a, trans_b=trans_b, tf32=tf32)
                expected = 1.5 * ((a.T if trans_a else a).astype(np.float64) @
                                  (b.T if trans_b else b)) + 0.25 * c0
                assert np.allclose(c, expected, rtol=1e-4, atol=1e-4), (precision, la, lb)
    assert len(launches) == 18
    assert [x["precision"] for x in launches] == ["h"] * 9 + ["t"] * 9


def test_tensor_core_inputs_want_a_float32_c(launches):
    a16, b16 = np.ones((4, 3), np.float16), np.ones((3, 2), np.float16)
    with pytest.raises(ValueError, match=r"^c has dtype float16; expected float32 \(a's float16"):
        gemmtune.gemm(PosingArray(a16), PosingArray(b16), PosingArray(np.zeros((4, 2), np.float16)))
    with pytest.raises(ValueError, match="^a has dtype float64; tf32=True takes float32 arrays"):
        a64 = np.ones((4, 3))
        gemmtune.gemm(PosingArray(a64), PosingArray(a64.T.copy()), PosingArray(np.zeros((4, 4))),
                      tf32=True)
    with pytest.raises(ValueError, match="^alpha = 1j is complex; the arrays are real"):
        gemmtune.gemm(PosingArray(a16), PosingArray(b16), PosingArray(np.zeros((4, 2), np.float32)),
                      alpha=1j)
    assert launches == []


def test_the_interface_stream_is_passed_on(launches):
    a, b, c = (np.ones((4, 4), np.float32) for _ in range(3))
    gemmtune.gemm(PosingArray(a, stream=2), PosingArray(b), PosingArray(c))
    gemmtune.gemm(PosingArray(a, stream=1), PosingArray(b), PosingArray(c))
    assert [x["stream"] for x in launches] == [2, 0]


def test_host_arrays_and_bad_arrays_are_refused_by_name(launches):
    a = np.ones((4, 3), np.float32)
    b = np.ones((3, 2), np.float32)
    c = np.zeros((4, 2), np.float32)
    with pytest.raises(ValueError, match="^a is not on a CUDA device"):
        gemmtune.gemm(a, PosingArray(b), PosingArray(c))
    with pytest.raises(ValueError, match="^b is a builtins.list, not a CUDA array"):
        gemmtune.gemm(PosingArray(a), [[1.0]], PosingArray(c))
    with pytest.raises(ValueError, match="^a has element type <i4"):
        gemmtune.gemm(PosingArray(a.astype(np.int32)), PosingArray(b), PosingArray(c))
    with pytest.raises(ValueError, match="^b has shape"):
        gemmtune.gemm(PosingArray(a), PosingArray(b.T.copy()), PosingArray(c))
    with pytest.raises(ValueError, match="^c has shape"):
        gemmtune.gemm(PosingArray(a), PosingArray(b), PosingArray(c.T.copy()))
    with pytest.raises(ValueError, match="^b has dtype float64"):
        gemmtune.gemm(PosingArray(a), PosingArray(b.astype(np.float64)), PosingArray(c))
    with pytest.raises(ValueError, match=r"^a has strides \(6, 2\)"):
        gemmtune.gemm(PosingArray(np.ones((4, 6), np.float32)[:, ::2]), PosingArray(b),
                      PosingArray(c))
    with pytest.raises(ValueError, match="^alpha = 1j is complex"):
        gemmtune.gemm(PosingArray(a), PosingArray(b), PosingArray(c), alpha=1j)
    with pytest.raises(ValueError, match="^c is None and a is neither"):
        gemmtune.gemm(PosingArray(a), PosingArray(b))
    other = PosingArray(b)
    other.device = SimpleNamespace(id=1)
    with pytest.raises(ValueError, match="^b is on CUDA device 1; expected a's device 0"):
        gemmtune.gemm(PosingArray(a), other, PosingArray(c))
    unaligned = np.ones(13, np.float32)[1:13].reshape(4, 3)
    with pytest.raises(ValueError, match="^a starts at address .* not a multiple of 16"):
        gemmtune.gemm(PosingArray(unaligned), PosingArray(b), PosingArray(c))
    assert launches == []
