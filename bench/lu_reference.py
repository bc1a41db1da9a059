#!/usr/bin/env python3
"""NumPy model of lu_client's blocked LU and its residual, on the same splitmix64 matrix
(--seed), for checking a GPU run's residual without a GPU:
    lu_reference.py N NB [s|d] [--skip-last-left] [--seed S]
--skip-last-left leaves out the last panel's row swaps on the columns left of it, as lu_client
did before the fix (its H100 run: 8.22e+11 in D, 1.37e+03 in S at N = 8192, nb = 256; this model
then gives 8.22e+11 and 1.41e+03, and 0.023 and 0.026 with the swaps). N = 8192 takes minutes."""
import argparse

import numpy as np


def splitmix_matrix(n, seed):
    """lu_client's random_entry for every element, column-major (index = row + col * n)."""
    z = np.arange(n * n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = np.uint64(seed) + (z + np.uint64(1)) * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(31)
    v = (z >> np.uint64(11)).astype(np.float64) * 2.0**-52 - 1.0
    return v.reshape(n, n).T.copy()


def getrf(p):
    """Unblocked LU with partial pivoting of an m x n panel in place; 1-based pivots."""
    m, n = p.shape
    piv = np.zeros(n, dtype=np.int64)
    for k in range(n):
        r = k + int(np.argmax(np.abs(p[k:, k])))
        piv[k] = r + 1
        if r != k:
            p[[k, r]] = p[[r, k]]
        p[k + 1 :, k] /= p[k, k]
        p[k + 1 :, k + 1 :] -= np.outer(p[k + 1 :, k], p[k, k + 1 :])
    return piv


def laswp(a, piv):
    """LAPACK laswp with k1 = 1, k2 = len(piv), incx = 1."""
    for i, r in enumerate(piv):
        if r - 1 != i:
            a[[i, r - 1]] = a[[r - 1, i]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("n", type=int)
    ap.add_argument("nb", type=int)
    ap.add_argument("precision", nargs="?", default="d", choices=["s", "d"])
    ap.add_argument("--skip-last-left", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    o = ap.parse_args()
    dtype = np.float32 if o.precision == "s" else np.float64
    n, nb = o.n, o.nb
    a = splitmix_matrix(n, o.seed).astype(dtype)
    f = a.copy()
    piv = np.zeros(n, dtype=np.int64)
    for j in range(0, n, nb):
        jb = min(nb, n - j)
        rest = n - j - jb
        piv[j : j + jb] = getrf(f[j:, j : j + jb])
        if rest == 0 and o.skip_last_left:
            continue
        if j > 0:
            laswp(f[j:, :j], piv[j : j + jb])
        if rest == 0:
            continue
        laswp(f[j:, j + jb :], piv[j : j + jb])
        l11 = np.tril(f[j : j + jb, j : j + jb], -1) + np.eye(jb, dtype=dtype)
        f[j : j + jb, j + jb :] = np.linalg.solve(l11, f[j : j + jb, j + jb :])
        f[j + jb :, j + jb :] -= f[j + jb :, j : j + jb] @ f[j : j + jb, j + jb :]
    pa = a.copy()
    laswp(pa, piv + np.arange(n) // nb * nb)  # the whole-matrix pivots
    lu = (np.tril(f, -1) + np.eye(n, dtype=dtype)) @ np.triu(f)
    err = np.linalg.norm((pa - lu).astype(np.float64))
    norm = np.linalg.norm(a.astype(np.float64))
    print(
        f"{o.precision} N={n} nb={nb}{' last-left-skipped' if o.skip_last_left else ''}: "
        f"||A||_F {norm:.1f}, ||P A - L U||_F {err:.3g}, "
        f"residual {err / (norm * n * np.finfo(dtype).eps):.3g}"
    )


if __name__ == "__main__":
    main()
