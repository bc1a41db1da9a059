"""Host time per call of gemmtune.gemm from Python on torch tensors, after the first call, beside
torch.matmul's own, on the local GPU. Small matrices, so that the GPU keeps up and the launch
queue never blocks the host: the figure is the host's cost of a call. --no-launch hands the
short path a no-op in place of the runtime's launch, so that the share of reading the tensors,
checking them and allocating C is timed alone; the difference is the launch's.
Each round's calls are issued behind a GPU sleep longer than the round, so that no call waits
for the GPU (a full launch queue would time the GPU's pace instead of the host's cost).
    python3 bench/python_host_time.py [--calls 500] [--size 64] [--no-launch]"""

import argparse
import statistics
import sys
import time

import torch

import gemmtune
from gemmtune import _arrays


def per_call_us(call, calls: int, rounds: int = 7) -> float:
    call()
    torch.cuda.synchronize()
    samples = []
    for _ in range(rounds):
        # About 100 us of GPU sleep per call issued (2e5 cycles at ~2 GHz): the calls queue behind it.
        torch.cuda._sleep(calls * 200_000)
        start = time.perf_counter()
        for _ in range(calls):
            call()
        samples.append((time.perf_counter() - start) / calls * 1e6)
        torch.cuda.synchronize()
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--no-launch", action="store_true",
                        help="time gemmtune.gemm's Python side only (the launch a no-op)")
    args = parser.parse_args()
    if args.no_launch:
        _arrays._register_torch(launch=lambda *launch: None)
    n = args.size
    print(f"device: {torch.cuda.get_device_name()}; torch {torch.__version__}; "
          f"Python {sys.version.split()[0]}; {n}x{n}x{n}; median of 7 rounds of {args.calls} "
          "calls, host microseconds per call" + ("; launch replaced by a no-op" if args.no_launch
                                                 else ""))
    worst = 0.0
    for dtype in (torch.float32, torch.float64):
        a = torch.randn(n, n, device="cuda", dtype=dtype)
        b = torch.randn(n, n, device="cuda", dtype=dtype)
        c = torch.empty(n, n, device="cuda", dtype=dtype)
        rows = [
            ("gemmtune.gemm(a, b, c)", lambda: gemmtune.gemm(a, b, c)),
            ("torch.matmul(a, b, out=c)", lambda: torch.matmul(a, b, out=c)),
            ("gemmtune.gemm(a, b)", lambda: gemmtune.gemm(a, b)),
            ("torch.matmul(a, b)", lambda: torch.matmul(a, b)),
        ]
        for name, call in rows:
            us = per_call_us(call, args.calls)
            if name.startswith("gemmtune"):
                worst = max(worst, us)
            print(f"{str(dtype).removeprefix('torch.'):8s} {name:28s} {us:7.2f} us")
    print(f"gemmtune.gemm worst: {worst:.2f} us per call (target < 10 us)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
