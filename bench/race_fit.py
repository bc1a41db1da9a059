#!/usr/bin/env python3
"""Which wrong read explains a wrong element of C: a failed verification's message names, for its
first C tiles, the element furthest off with its value and the FP64 reference in full precision
(profiler/mismatch.cpp). The runner's inputs are known (std::mt19937 seeded 11 for A and 23 for B,
uniform in [-1, 1), as profiler/runner.cpp's fill_random draws them), so each hypothesis of the
form "the K range [k0, k0 + width) of one operand, or of both, was read from k0 + shift instead
(another step, or another pipeline stage's tile, up to --stages tiles either way), or read as
zeros, or counted twice" predicts that element; with --bm and --bn, so does a read of the same K
range, or one up to --stages tiles away, of another block's rows of A or columns of B. One that
reproduces the wrong value up to rounding names the read; none rules these forms out (another
warp's rows or columns, part of a fragment, or two steps at once are not among them).

    bench/race_fit.py --precision d --opa t --opb n --m 1598 --n 90 --k 744 --bk 32 --step 8 \\
        --element 176,56,GOT,WANT [--element ...] [--catch-xml RUN.xml ...]

--catch-xml reads the elements from the GPU tests' XML report (`gemmtune_gpu_tests ... -r xml`,
as scripts/device-race writes it: the messages unwrapped), those of failures of this problem,
each with the configuration that computed it.

Real precisions (S, D), alpha 1, beta 0, one matrix (no batch): the message's WANT is checked
against the reference drawn again here, which catches a wrong layout, leading dimension or
problem. Prints the best hypotheses per element, those within rounding marked."""
import argparse
import re
import sys
import xml.etree.ElementTree as ElementTree

import numpy as np


def runner_values(seed, count):
    """The first `count` values fill_random writes for an S or D buffer (libstdc++'s
    uniform_real_distribution<double>(-1, 1) over std::mt19937: two 32-bit draws per double)."""
    raw = np.random.RandomState(seed).randint(0, 2**32, size=2 * count, dtype=np.uint64)
    raw = raw.astype(np.float64)
    u = (raw[0::2] + raw[1::2] * 2.0**32) / 2.0**64
    u = np.minimum(u, np.nextafter(1.0, 0.0))
    return -1.0 + 2.0 * u


class Operands:
    """A and B as the runner fills them, read as op(A) (m, k) and op(B) (k, n) over k < K
    (hypotheses pads them with the zeros the kernels' copies fill past K)."""

    def __init__(self, args):
        self.args = args
        rows_a = args.m if args.opa == "n" else args.k
        cols_a = args.k if args.opa == "n" else args.m
        rows_b = args.k if args.opb == "n" else args.n
        cols_b = args.n if args.opb == "n" else args.k
        self.lda = args.lda or rows_a
        self.ldb = args.ldb or rows_b
        if self.lda < rows_a or self.ldb < rows_b:
            raise SystemExit(f"lda {self.lda} or ldb {self.ldb} below the rows it must hold "
                             f"({rows_a}, {rows_b})")
        a = runner_values(11, self.lda * cols_a).reshape(cols_a, self.lda).T
        b = runner_values(23, self.ldb * cols_b).reshape(cols_b, self.ldb).T
        if args.precision == "s":
            a, b = a.astype(np.float32).astype(np.float64), b.astype(np.float32).astype(np.float64)
        self.a, self.b = a, b

    def row_of_a(self, m):
        """op(A)'s row m over k = 0..K-1."""
        k = self.args.k
        return self.a[m, :k] if self.args.opa == "n" else self.a[:k, m]

    def column_of_b(self, n):
        k = self.args.k
        return self.b[:k, n] if self.args.opb == "n" else self.b[n, :k]


def rounding(precision, a_row, b_col):
    """How far two orders of the same dot product may differ: K unit roundoffs of the sum of
    the products' magnitudes."""
    eps = np.finfo(np.float32 if precision == "s" else np.float64).eps
    return len(a_row) * eps * float(np.abs(a_row) @ np.abs(b_col))


def hypotheses(args, a_row, b_col, others=()):
    """The element's reference and (description, predicted value) for every read of one
    operand's K range, or both, from elsewhere. `others`: (name, "A" or "B", vector over K) of
    another block's row of op(A) or column of op(B), read in place of the element's own."""
    k_len = args.k
    padded = lambda v: np.concatenate([v, np.zeros(args.bk * (args.stages + 2))])
    a, b = padded(a_row), padded(b_col)
    others = [(name, operand, padded(v)) for name, operand, v in others]
    want = float(a_row @ b_col)
    out = []
    for width, unit in ((args.step, "step"), (args.bk, "tile")):
        for k0 in range(0, k_len, width):
            k1 = min(k0 + width, k_len)
            own = float(a[k0:k1] @ b[k0:k1])
            out.append((f"{unit} k {k0}-{k1 - 1} read as zeros (A or B)", want - own))
            out.append((f"{unit} k {k0}-{k1 - 1} counted twice", want + own))
            # Another step's or stage's data: up to `stages` tiles either way.
            for shift in range(-args.stages * args.bk, args.stages * args.bk + 1, width):
                lo, hi = k0 + shift, k1 + shift
                if shift == 0 or lo < 0:
                    continue
                for operand in ("A", "B", "A and B"):
                    sa = a[lo:hi] if "A" in operand else a[k0:k1]
                    sb = b[lo:hi] if "B" in operand else b[k0:k1]
                    out.append((f"{operand} of {unit} k {k0}-{k1 - 1} read from k {lo}-{hi - 1}",
                                want - own + float(sa @ sb)))
            for name, operand, v in others:
                for shift in range(-args.stages * args.bk, args.stages * args.bk + 1, args.bk):
                    lo, hi = k0 + shift, k1 + shift
                    if lo < 0:
                        continue
                    sa = v[lo:hi] if operand == "A" else a[k0:k1]
                    sb = v[lo:hi] if operand == "B" else b[k0:k1]
                    out.append((f"{operand} of {unit} k {k0}-{k1 - 1} read from {name}, k "
                                f"{lo}-{hi - 1}", want - own + float(sa @ sb)))
    return want, out


def other_blocks(args, ops, row, col):
    """Another block's row of op(A) (row +- BM, +- 2 BM) and column of op(B) (col +- BN,
    +- 2 BN), those inside the problem, for hypotheses()."""
    out = []
    for j in (-2, -1, 1, 2):
        if args.bm and 0 <= row + j * args.bm < args.m:
            out.append((f"row {row + j * args.bm}", "A", ops.row_of_a(row + j * args.bm)))
        if args.bn and 0 <= col + j * args.bn < args.n:
            out.append((f"column {col + j * args.bn}", "B", ops.column_of_b(col + j * args.bn)))
    return out


WORST = re.compile(r"worst \((\d+), (\d+)\) (\S+) for (\S+?)[;,]?(?:\s|$)")
CONFIG = re.compile(r"\bBM\d+_BN\d+_\S+")


def catch_elements(path, shape):
    """(configuration, "ROW,COLUMN,GOT,WANT") of every wrong element a Catch2 XML report names
    for problem `shape` (its shape id, "d_tn_1598x90x744_b1"), in report order, each once. A
    failed check's messages are <Info> elements before it: the problem and configuration, then
    the measurement's error."""
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError) as e:
        raise SystemExit(f"--catch-xml {path}: not a readable XML report ({e})")
    found, seen, context = [], set(), None
    for node in root.iter("Info"):
        text = " ".join((node.text or "").split())
        if CONFIG.search(text):
            context = text
        for m in WORST.finditer(text):
            if context is None or not context.startswith(shape + " "):
                continue
            config = CONFIG.search(context).group(0)
            item = (config, ",".join(m.groups()))
            if item not in seen:
                seen.add(item)
                found.append(item)
    return found


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--precision", choices=["s", "d"], required=True)
    p.add_argument("--opa", choices=["n", "t"], default="n")
    p.add_argument("--opb", choices=["n", "t"], default="n")
    p.add_argument("--m", type=int, required=True)
    p.add_argument("--n", type=int, required=True)
    p.add_argument("--k", type=int, required=True)
    p.add_argument("--lda", type=int, default=0)
    p.add_argument("--ldb", type=int, default=0)
    p.add_argument("--bk", type=int, required=True, help="the kernel's BK (K of one tile)")
    p.add_argument("--step", type=int, required=True, help="K of one step (the mma's k)")
    p.add_argument("--stages", type=int, default=4, help="tiles to look either way")
    p.add_argument("--bm", type=int, default=0, help="the kernel's BM: reads of other blocks' A")
    p.add_argument("--bn", type=int, default=0, help="the kernel's BN: reads of other blocks' B")
    p.add_argument("--element", action="append", default=[],
                   help="ROW,COLUMN,GOT,WANT as the message prints them (WANT optional)")
    p.add_argument("--catch-xml", action="append", default=[],
                   help="the GPU tests' XML report: its wrong elements of this problem")
    p.add_argument("--show", type=int, default=5, help="hypotheses to print per element")
    args = p.parse_args(argv)
    for name in ("m", "n", "k", "bk", "step", "stages"):
        if getattr(args, name) < 1:
            raise SystemExit(f"--{name} {getattr(args, name)} must be at least 1")
    for name in ("bm", "bn"):
        if getattr(args, name) < 0:
            raise SystemExit(f"--{name} {getattr(args, name)} must be 0 (not looked at) or more")
    if args.bk % args.step:
        raise SystemExit(f"--bk {args.bk} is not a multiple of --step {args.step}")
    ops = Operands(args)
    elements = [("", text) for text in args.element]
    shape = f"{args.precision}_{args.opa}{args.opb}_{args.m}x{args.n}x{args.k}_b1"
    for path in args.catch_xml:
        found = catch_elements(path, shape)
        print(f"{path}: {len(found)} wrong elements of {shape}")
        elements += found
    if not elements:
        raise SystemExit("no element to explain: give --element or a --catch-xml report holding "
                         "one of this problem's")
    for config, text in elements:
        if config:
            print(config)
        try:
            fields = text.split(",")
            if len(fields) not in (3, 4):
                raise ValueError
            row, col = int(fields[0]), int(fields[1])
            got = float(fields[2])
            message_want = float(fields[3]) if len(fields) == 4 else None
        except ValueError:
            raise SystemExit(f"--element {text!r} is not ROW,COLUMN,GOT[,WANT]")
        if not (0 <= row < args.m and 0 <= col < args.n):
            raise SystemExit(f"--element {text!r} lies outside C ({args.m} x {args.n})")
        if not np.isfinite(got):
            if config:  # a report's: the others may still be wrong reads
                print(f"({row}, {col}): {got}, unwritten or overflowed, not a wrong read")
                continue
            raise SystemExit(f"--element {text!r}: {got} is an unwritten or overflowed element, "
                             "not a wrong read")
        a_row, b_col = ops.row_of_a(row), ops.column_of_b(col)
        want, hyps = hypotheses(args, a_row, b_col, other_blocks(args, ops, row, col))
        tolerance = rounding(args.precision, a_row, b_col)
        if message_want is not None and abs(message_want - want) > tolerance:
            raise SystemExit(f"--element {text!r}: the message's reference {message_want!r} is "
                             f"not this problem's {want!r} (beyond rounding {tolerance:.3g}): "
                             "another problem, layout or leading dimension, or a batch, beta "
                             "or alpha this tool does not draw")
        hyps.sort(key=lambda h: abs(h[1] - got))
        print(f"({row}, {col}): got {got!r}, reference {want!r}, off by {got - want:.6g}")
        for desc, value in hyps[:args.show]:
            exact = abs(value - got) <= tolerance
            print(f"  {'MATCH ' if exact else '      '}{desc}: {value!r} "
                  f"(miss {abs(value - got):.3g}, rounding {tolerance:.3g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
