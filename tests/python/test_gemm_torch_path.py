"""gemm's short path for torch tensors (C++, the module's torch_gemm), checked without torch or a
GPU: a stand-in torch module whose tensors are host NumPy arrays posing as CUDA ones. Every case
must launch exactly what the general path launches (both launches replaced by one recorder), and
anything the short path does not take must reach the general path, so that its errors are the
same."""

import sys
import types

import pytest

from gemmtune import _arrays

np = pytest.importorskip("numpy", reason="the stand-in tensors are NumPy arrays")


class Dtype:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f"torch.{self.name}"


DTYPES = {name: Dtype(name) for name in ("float32", "float64", "complex64", "complex128",
                                         "int32")}


class Device:
    def __init__(self, kind, index):
        self.type, self.index = kind, index

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"


def make_torch():
    torch = types.ModuleType("torch")

    reads = []

    class Tensor:
        def __getattribute__(self, name):
            if not name.startswith("_") and name != "array":
                reads.append(name)
            return object.__getattribute__(self, name)

        def __init__(self, array, device=0):
            self.array = array
            self.dtype = DTYPES[array.dtype.name]
            self.is_cuda = device is not None
            self._device = -1 if device is None else device
            self.shape = tuple(array.shape)

        def get_device(self):
            return self._device

        @property
        def device(self):
            return Device("cpu", None) if self._device < 0 else Device("cuda", self._device)

        def dim(self):
            return self.array.ndim

        def stride(self):
            array = self.array
            return tuple(s // array.itemsize for s in array.strides)

        def data_ptr(self):
            return self.array.__array_interface__["data"][0]

        def new_empty(self, shape):
            return Tensor(np.zeros(shape, dtype=self.array.dtype), self._device)

    def empty(shape, dtype, device):
        return Tensor(np.zeros(shape, dtype=np.dtype(dtype.name)), device.index)

    torch.Tensor = Tensor
    torch.reads = reads  # the attributes gemm read from tensors, in order
    torch.empty = empty
    for name, dtype in DTYPES.items():
        setattr(torch, name, dtype)
    torch._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda device: 1000 + device)
    return torch


@pytest.fixture
def torch(monkeypatch):
    fake = make_torch()
    monkeypatch.setitem(sys.modules, "torch", fake)
    for name, value in (("_torch_module", None), ("_torch_stream", None)):
        monkeypatch.setattr(_arrays, name, value)
    monkeypatch.setattr(_arrays, "_torch_dtypes", {})
    yield fake
    # The C++ short path still holds the stand-in: the next gemm registers whatever torch is then.
    monkeypatch.undo()
    _arrays._torch_module = None


@pytest.fixture
def launches(monkeypatch, torch):
    calls = []

    def record(*args):
        calls.append(args)

    monkeypatch.setattr(_arrays._gemmtune, "gemm", record)
    _arrays._register_torch(launch=record)
    return calls


@pytest.fixture
def general(monkeypatch):
    """Counts the calls that reach the general path."""
    calls = []
    original = _arrays._general

    def counted(*args):
        calls.append(args)
        return original(*args)

    monkeypatch.setattr(_arrays, "_general", counted)
    return calls


def views(rows, cols, dtype):
    """Row-major, padded row-major, column-major and a one-column-wide view of (rows, cols)."""
    base = np.zeros((rows, cols + 3), dtype=dtype)[:, :cols]
    return {"row": np.zeros((rows, cols), dtype=dtype), "padded": base,
            "column": np.asfortranarray(np.zeros((rows, cols), dtype=dtype))}


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
def test_the_short_path_launches_what_the_general_path_does(torch, launches, general, dtype,
                                                              trans_a, trans_b):
    m, n, k = 6, 5, 4
    alpha, beta = (2 - 1j, 0.5j) if dtype.startswith("complex") else (2, 0.5)
    for la, a in views(*((k, m) if trans_a else (m, k)), dtype).items():
        for lb, b in views(*((n, k) if trans_b else (k, n)), dtype).items():
            for lc, c in views(m, n, dtype).items():
                ta, tb, tc = torch.Tensor(a), torch.Tensor(b), torch.Tensor(c)
                _arrays.gemm(ta, tb, tc, alpha=alpha, beta=beta, trans_a=trans_a,
                             trans_b=trans_b)
                short = not general
                _arrays._general(ta, tb, tc, alpha, beta, trans_a, trans_b)
                assert launches[-1] == launches[-2], (la, lb, lc)
                # The short path takes exactly the unpadded and padded row-major ones.
                assert short == (la != "column" and lb != "column" and lc != "column")
                general.clear()


def test_a_new_c_is_allocated_on_a_s_device_and_stream(torch, launches, general):
    a = torch.Tensor(np.zeros((3, 4), np.float64), device=1)
    b = torch.Tensor(np.zeros((4, 2), np.float64), device=1)
    c = _arrays.gemm(a, b, beta=7)
    assert isinstance(c, torch.Tensor) and c.shape == (3, 2) and c.get_device() == 1
    assert not general
    (call,) = launches
    assert call[:6] == ("d", "n", "n", 2, 3, 4)
    assert call[12:14] == (0.0, 0.0)  # beta without c is 0
    assert call[16:] == (1001, 1)  # device 1's current stream, device 1


@pytest.mark.parametrize("case, message", [
    ("cpu", "^a is a torch tensor on cpu; expected a CUDA tensor"),
    ("dtype", r"^a has dtype torch\.int32; expected float32"),
    ("dims", r"^b has 3 dimensions \(shape \(4, 2, 1\)\)"),
    ("k", "^b has shape \\(5, 2\\); expected 4 rows"),
    ("b dtype", "^b has dtype float32; expected a's float64"),
    ("b device", "^b is on CUDA device 1; expected a's device 0"),
    ("c shape", r"^c has shape \(2, 3\); expected \(3, 2\)"),
    ("c device", "^c is on CUDA device 1; expected a's device 0"),
    ("alpha", "^alpha = 1j is complex; the arrays are real"),
    ("unaligned", "^a starts at address .* not a multiple of 16 bytes"),
])
def test_what_the_short_path_leaves_is_refused_by_the_general_path(torch, launches, case,
                                                                   message):
    def t(shape, dtype=np.float64, device=0):
        return torch.Tensor(np.zeros(shape, dtype), device)

    a, b, c, alpha = t((3, 4)), t((4, 2)), t((3, 2)), 1
    if case == "cpu":
        a = t((3, 4), device=None)
    elif case == "dtype":
        a = t((3, 4), np.int32)
    elif case == "dims":
        b = t((4, 2, 1))
    elif case == "k":
        b = t((5, 2))
    elif case == "b dtype":
        b = t((4, 2), np.float32)
    elif case == "b device":
        b = t((4, 2), device=1)
    elif case == "c shape":
        c = t((2, 3))
    elif case == "c device":
        c = t((3, 2), device=1)
    elif case == "alpha":
        alpha = 1j
    elif case == "unaligned":
        a = torch.Tensor(np.zeros(13, np.float64)[1:13].reshape(3, 4))
    with pytest.raises(ValueError, match=message):
        _arrays.gemm(a, b, c, alpha=alpha)
    assert launches == []


def test_the_short_path_reads_each_tensor_six_times_at_most(torch, launches):
    a, b, c = (torch.Tensor(np.zeros((8, 8), np.float32)) for _ in range(3))
    _arrays.gemm(a, b, c)
    assert len(launches) == 1
    # dtype, is_cuda, get_device, shape, stride, data_ptr: host time per call is the point.
    assert len(torch.reads) <= 18, torch.reads
    assert "dim" not in torch.reads


def test_the_short_path_registration_refuses_what_is_not_torch(torch):
    with pytest.raises(TypeError, match="tensor_type must be torch.Tensor's type"):
        _arrays._gemmtune.torch_register(object(), [], abs, None)
    with pytest.raises(ValueError, match="four"):
        _arrays._gemmtune.torch_register(torch.Tensor, [], abs, None)
    pairs = [(getattr(torch, name), letter) for name, letter in _arrays._PRECISIONS.items()]
    with pytest.raises(ValueError, match="pair"):
        _arrays._gemmtune.torch_register(torch.Tensor, pairs[:3] + [(torch.float32,)], abs, None)
    with pytest.raises(ValueError, match="one of s, d, c, z"):
        _arrays._gemmtune.torch_register(torch.Tensor, pairs[:3] + [(torch.float32, "x")], abs,
                                         None)


def test_flags_are_read_by_truthiness(torch, launches, general):
    a, b = (torch.Tensor(np.zeros((4, 4), np.float32)) for _ in range(2))
    for flag in (1, 0, np.bool_(True), np.bool_(False)):
        _arrays.gemm(a, b, trans_a=flag, trans_b=flag)
        _arrays._general(a, b, None, 1, 0, flag, flag)
        assert launches[-2][:3] == launches[-1][:3] == ("s", "t" if flag else "n",
                                                          "t" if flag else "n")
    assert len(general) == 4  # the reference calls only


def test_arrays_of_another_type_do_not_take_the_short_path(torch, launches, general):
    a = torch.Tensor(np.zeros((3, 4), np.float64))
    with pytest.raises(ValueError):
        _arrays.gemm(a, np.zeros((4, 2)))
    assert len(general) == 1 and launches == []
