#!/usr/bin/env python3
"""On the GPU machine: Triton's FP16 matmul (the tutorial kernel, autotuned over the tutorial's
CUDA configurations) beside cuBLAS (torch.matmul) on the FP16 shapes of bench/reduced_vs_cublas.sh.

Row-major A (M x K) and B (K x N) as Triton's tutorial takes them, FP32 accumulation, FP16 C;
every kernel's result is checked against torch.matmul. Timing: triton.testing.do_bench (median
of its repetitions, L2 flushed between them), autotuning wall time measured around the first call.
Rows: M N K, Triton us, cuBLAS us, Triton x cuBLAS, tuning seconds, Triton's chosen config.
    python3 bench/triton_peer.py
"""
import time

import torch
import triton
import triton.language as tl

# The tutorial's CUDA configurations: BLOCK_SIZE_M, _N, _K, num_stages, num_warps (GROUP_SIZE_M 8).
TUTORIAL = [(128, 256, 64, 3, 8), (64, 256, 32, 4, 4), (128, 128, 32, 4, 4), (128, 64, 32, 4, 4),
            (64, 128, 32, 4, 4), (128, 32, 32, 4, 4), (64, 32, 32, 5, 2), (32, 64, 32, 5, 2)]
CONFIGS = [
    triton.Config({"BLOCK_SIZE_M": m, "BLOCK_SIZE_N": n, "BLOCK_SIZE_K": k, "GROUP_SIZE_M": 8},
                  num_stages=stages, num_warps=warps)
    for m, n, k, stages, warps in TUTORIAL
]


@triton.autotune(configs=CONFIGS, key=["M", "N", "K"])
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                  BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c = acc.to(tl.float16)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


def matmul(a, b):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_SIZE_M"]) * triton.cdiv(N, meta["BLOCK_SIZE_N"]),)
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1))
    return c


SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 64), (4097, 4097, 4097),
          (6144, 6016, 128)]

if __name__ == "__main__":
    torch.manual_seed(0)
    print(torch.cuda.get_device_name(), "torch", torch.__version__, "triton", triton.__version__)
    for M, N, K in SHAPES:
        a = torch.randn((M, K), device="cuda", dtype=torch.float16)
        b = torch.randn((K, N), device="cuda", dtype=torch.float16)
        start = time.perf_counter()
        c = matmul(a, b)
        torch.cuda.synchronize()
        tuning = time.perf_counter() - start
        ref = torch.matmul(a, b)
        err = ((c.float() - ref.float()).norm() / ref.float().norm()).item()
        assert err < 1e-2, f"{M}x{N}x{K}: relative error {err}"
        t_triton = triton.testing.do_bench(lambda: matmul(a, b)) * 1e3
        t_cublas = triton.testing.do_bench(lambda: torch.matmul(a, b)) * 1e3
        print(f"{M} {N} {K} triton_us {t_triton:.1f} cublas_us {t_cublas:.1f} "
              f"x_cublas {t_cublas / t_triton:.3f} tuning_s {tuning:.1f} "
              f"config {matmul_kernel.best_config}")
