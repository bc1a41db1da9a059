"""gemm on torch tensors on the local GPU against torch.matmul in double precision: every
precision, transposes, row- and column-major and padded views, refused views, bad input with
nothing launched, and a stream other than the default. Skipped, saying why, without torch or a
GPU."""

import pytest

import gemmtune
from gemmtune import _gemmtune

torch = pytest.importorskip("torch", reason="the GPU tests need torch")
if not torch.cuda.is_available() or _gemmtune.cuda_device_count() == 0:
    pytest.skip("no CUDA GPU on this machine: the GPU tests are skipped",
                allow_module_level=True)

DTYPES = [torch.float32, torch.float64, torch.complex64, torch.complex128]
WIDE = {torch.float32: torch.float64, torch.float64: torch.float64,
        torch.complex64: torch.complex128, torch.complex128: torch.complex128}
EPS = {torch.float32: 1.2e-7, torch.float64: 2.2e-16, torch.complex64: 1.2e-7,
       torch.complex128: 2.2e-16}


def random(shape, dtype, generator):
    x = torch.randn(*shape, dtype=WIDE[dtype], device="cuda", generator=generator)
    if dtype.is_complex:
        x = x + 1j * torch.randn(*shape, dtype=torch.float64, device="cuda",
                                 generator=generator)
    return x.to(dtype)


def check(c, a, b, k, trans_a=False, trans_b=False, alpha=1, beta=0, c0=None):
    wa, wb = a.to(WIDE[a.dtype]), b.to(WIDE[b.dtype])
    expected = alpha * torch.matmul(wa.T if trans_a else wa, wb.T if trans_b else wb)
    if c0 is not None:
        expected = expected + beta * c0.to(WIDE[c0.dtype])
    torch.cuda.synchronize()
    error = (c.to(WIDE[c.dtype]) - expected).abs().max().item()
    scale = expected.abs().max().item() or 1.0
    assert error / scale < 8 * k * EPS[a.dtype], f"relative error {error / scale:.3g}"


@pytest.fixture
def gen():
    return torch.Generator(device="cuda").manual_seed(7)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).removeprefix("torch."))
def test_every_precision_matches_matmul_in_double(dtype, gen):
    m, n, k = 67, 45, 33
    a, b = random((m, k), dtype, gen), random((k, n), dtype, gen)
    c = gemmtune.gemm(a, b)
    assert c.shape == (m, n) and c.dtype == dtype and c.device == a.device
    check(c, a, b, k)


@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
def test_transposes(trans_a, trans_b, gen):
    m, n, k = 96, 80, 64
    a = random((k, m) if trans_a else (m, k), torch.float32, gen)
    b = random((n, k) if trans_b else (k, n), torch.float32, gen)
    c = gemmtune.gemm(a, b, trans_a=trans_a, trans_b=trans_b)
    check(c, a, b, k, trans_a, trans_b)


def test_column_major_and_padded_views_are_handled(gen):
    m, n, k = 70, 50, 40
    a = random((k, m), torch.float64, gen).T  # column-major view of (m, k)
    big = random((k + 3, n + 9), torch.float64, gen)
    b = big[:k, :n]  # row-major with a leading dimension larger than n
    c_store = torch.zeros((n, m), dtype=torch.float64, device="cuda")
    c = c_store.T  # a column-major output
    out = gemmtune.gemm(a, b, c)
    assert out is c
    check(c, a, b, k)


def test_alpha_beta_accumulate_into_c(gen):
    m, n, k = 64, 64, 32
    a, b = random((m, k), torch.complex64, gen), random((k, n), torch.complex64, gen)
    c0 = random((m, n), torch.complex64, gen)
    c = c0.clone()
    gemmtune.gemm(a, b, c, alpha=0.5 - 1j, beta=2)
    check(c, a, b, k, alpha=0.5 - 1j, beta=2, c0=c0)


def test_views_without_a_unit_stride_are_refused_by_name(gen):
    a = random((32, 64), torch.float32, gen)[:, ::2]
    b = random((32, 16), torch.float32, gen)
    with pytest.raises(ValueError, match=r"^a has strides"):
        gemmtune.gemm(a, b)


def test_views_at_an_unaligned_offset_are_refused_by_name(gen):
    big = random((33, 17), torch.float32, gen)
    with pytest.raises(ValueError, match=r"^b starts at address .* not a multiple of 16 bytes"):
        gemmtune.gemm(big[:16, :8], big[1:9, 1:13])


def bad_call_leaves_c_untouched(call, c, message):
    before = c.clone()
    with pytest.raises(ValueError, match=message):
        call()
    torch.cuda.synchronize()
    assert torch.equal(c, before)


def test_bad_input_is_refused_naming_the_tensor_with_nothing_launched(gen):
    a, b = random((16, 8), torch.float32, gen), random((8, 12), torch.float32, gen)
    c = random((16, 12), torch.float32, gen)
    bad_call_leaves_c_untouched(lambda: gemmtune.gemm(a.cpu(), b, c), c, "^a is a torch tensor "
                                "on cpu; expected a CUDA tensor")
    bad_call_leaves_c_untouched(lambda: gemmtune.gemm(a, b.cpu(), c), c, "^b is a torch tensor")
    bad_call_leaves_c_untouched(lambda: gemmtune.gemm(a.int(), b.int()), c,
                                r"^a has dtype torch.int32; expected float32")
    c16 = c.half()
    bad_call_leaves_c_untouched(lambda: gemmtune.gemm(a.half(), b.half(), c16), c16,
                                r"^c has dtype float16; expected float32 \(a's float16")
    bad_call_leaves_c_untouched(lambda: gemmtune.gemm(a, b.T, c), c, "^b has shape")
    bad_call_leaves_c_untouched(lambda: gemmtune.gemm(a, b, c[:, :5]), c, "^c has shape")
    bad_call_leaves_c_untouched(lambda: gemmtune.gemm(a, b.double(), c), c, "^b has dtype")
    bad_call_leaves_c_untouched(lambda: gemmtune.gemm(a, b, c.double()), c, "^c has dtype")
    bad_call_leaves_c_untouched(lambda: gemmtune.gemm(a[None], b, c), c, "^a has 3 dimensions")


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="one GPU: no other device to refuse")
def test_tensors_on_different_devices_are_refused(gen):
    a = random((16, 8), torch.float32, gen)
    b = torch.randn(8, 12, device="cuda:1")
    with pytest.raises(ValueError, match="^b is on CUDA device 1; expected a's device 0"):
        gemmtune.gemm(a, b)


def test_the_current_stream_is_honoured(gen):
    m, n, k = 128, 128, 128
    a_real, b = random((m, k), torch.float32, gen), random((k, n), torch.float32, gen)
    gemmtune.gemm(a_real, b)  # compile and load outside the timed part
    a = torch.zeros_like(a_real)
    c = torch.zeros((m, n), device="cuda")
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        # a is written on the side stream after a long wait; a gemm on any other stream would
        # read zeros.
        torch.cuda._sleep(200_000_000)
        a.copy_(a_real)
        gemmtune.gemm(a, b, c)
    side.synchronize()
    check(c, a_real, b, k)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
@pytest.mark.parametrize("trans_a", [False, True])
def test_tensor_core_inputs_accumulate_into_float32(dtype, trans_a, gen):
    # Multiples of 1/16 below 1/2: exact in every input type, and so are their products and the
    # float32 sums of 300 of them, so the tensor cores must give the double reference closely.
    m, n, k = 133, 70, 300
    tf32 = dtype == torch.float32

    def exact(shape):
        return (torch.randint(-8, 9, shape, device="cuda", generator=gen) / 16).to(dtype)

    a = exact((k, m) if trans_a else (m, k))
    b = exact((k, n))
    c = gemmtune.gemm(a, b, trans_a=trans_a, tf32=tf32)
    assert c.dtype == torch.float32 and c.shape == (m, n)
    expected = torch.matmul((a.T if trans_a else a).double(), b.double())
    torch.cuda.synchronize()
    assert (c.double() - expected).abs().max().item() < 1e-5
    c0 = torch.full((m, n), 0.25, device="cuda")
    c1 = c0.clone()
    gemmtune.gemm(a, b, c1, alpha=1.5, beta=2.0, trans_a=trans_a, tf32=tf32)
    torch.cuda.synchronize()
    assert (c1.double() - (1.5 * expected + 0.5)).abs().max().item() < 1e-5
