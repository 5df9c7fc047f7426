#!/usr/bin/env python3
"""Property test: every literal value survives shardlab-opt, bit for bit.

Writes modules of random literals of every element type shardlab models
(integers i1..i64, si/ui of each width; f64, f32, f16, bf16, every f8, f6 and
f4 type; complex<f32>, complex<f64>), with the edge values of each (min,
max, 0, -0, 2^53 +- 1, 2^63, 2^64 - 1, NaNs with payloads, infinities,
subnormals, ties of rounding), spelled every way MLIR reads them (decimal,
hex integers, float bits in hex, splats, lists, hex blobs above 100
elements, scalar attributes, dense arrays). Each module goes through
shardlab-opt with no pass; the printed text is read back by
tests/values/mlir_literals.py, a reader that shares no code with shardlab,
and every element's bits are compared with the bits the test computed
itself from what it wrote.

With --oracle SDY_OPT (Shardy's own sdy_opt, ../shared/tools/shardy) the
printed text must also equal what sdy_opt prints for the same module: the
spelling of each value, not only its bits.

    test_literal_roundtrip.py --opt build/shardlab-opt [--oracle PATH]
                              [--seed N] [--rounds N]

Prints the number of literals checked per element type; exits 1 on any
difference, naming the first ones.
"""
import argparse
import collections
import math
import os
import random
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mlir_literals as ml  # noqa: E402

INT_TYPES = ["i1", "i2", "i4", "i8", "i16", "i32", "i64",
             "si8", "si16", "si32", "si64",
             "ui2", "ui4", "ui8", "ui16", "ui32", "ui64"]
FLOAT_TYPES = list(ml.FLOAT_FORMATS)
COMPLEX_TYPES = ["complex<f32>", "complex<f64>"]


# ---- values and their spellings ---------------------------------------------

def int_range(name):
    kind = ml.element_kind(name)
    width, signedness = kind[1], kind[2]
    if width == 1 and signedness == "signless":
        return 0, 1
    if signedness == "unsigned":
        return 0, (1 << width) - 1
    if signedness == "signed":
        return -(1 << (width - 1)), (1 << (width - 1)) - 1
    return -(1 << (width - 1)), (1 << width) - 1  # signless: both readings


def int_edges(name):
    lo, hi = int_range(name)
    edges = {lo, hi, 0, 1, -1, lo + 1, hi - 1, 2 ** 53 - 1, 2 ** 53, 2 ** 53 + 1,
             -(2 ** 53) - 1, 2 ** 63 - 1, 2 ** 63, -(2 ** 63), 2 ** 62 + 12345}
    return sorted(v for v in edges if lo <= v <= hi and not (name == "i1" and v < 0))


def int_literal(value, name, rng):
    """(spelling, bits) of an integer element."""
    width = ml.element_kind(name)[1]
    bits = value & ((1 << width) - 1)
    if name == "i1":
        return rng.choice([str(value), "true" if value else "false"]), bits
    if value >= 0 and rng.random() < 0.3:
        return hex(value), bits
    return str(value), bits


def float_edges(name):
    """Bit patterns at the edges of a format: zeros, the smallest subnormal,
    the largest subnormal, the smallest normal, one, the largest finite,
    infinities and NaNs (with payloads) where the format has them."""
    width, ebits, fbits, bias, kind, signed = ml.FLOAT_FORMATS[name]
    sign = 1 << (width - 1) if signed else 0
    top = (1 << ebits) - 1
    out = {0, 1, (1 << fbits) - 1 if fbits else 0, 1 << fbits}
    if kind == "ieee":
        out |= {top << fbits, (top << fbits) | 1, (top << fbits) | (1 << (fbits - 1)),
                (top << fbits) | ((1 << fbits) - 1), ((top - 1) << fbits) | ((1 << fbits) - 1)}
    elif kind == "fn":
        out |= {(1 << (width if not signed else width - 1)) - 1,
                (1 << (width if not signed else width - 1)) - 2}
    elif kind in ("fnuz", "none"):
        out |= {(1 << (width - 1)) - 1}
        if kind == "fnuz":
            out.add(1 << (width - 1))  # NaN
    one = bias << fbits
    out.add(one)
    return sorted(out | ({b | sign for b in out} if sign else set()))


def float_spelling(bits, name, rng):
    """(spelling, bits) of a float element: its bits in hex, or a decimal
    that reads to a known value (the test rounds it itself)."""
    v = ml.float_value(bits, name)
    if not isinstance(v, ml.fractions.Fraction) or rng.random() < 0.35:
        return hex(bits).upper().replace("0X", "0x"), bits
    x = float(v)
    digits = rng.choice([3, 6, 9, 12, 17, 25])
    text = "%.*e" % (digits, x)
    if text.startswith("-"):
        pass
    mant, _, exp = text.partition("e")
    if "." not in mant:
        mant += ".0"
    text = mant + "e" + exp
    # MLIR rounds the decimal to f64, then to the type
    expected = ml.float_bits(float(text), name)
    if ml.FLOAT_FORMATS[name][4] == "fnuz" and expected == 1 << 7 and math.copysign(1, float(text)) < 0 and float(text) == 0:
        expected = 0
    return text, expected


def random_float_bits(name, rng):
    width = ml.FLOAT_FORMATS[name][0]
    if rng.random() < 0.5:
        return rng.getrandbits(width)
    # a value near 1 (ordinary weights and constants)
    x = rng.uniform(-4, 4) * 10 ** rng.randint(-8, 8)
    return ml.float_bits(x, name)


def random_decimal(name, rng):
    """A decimal literal of an ordinary value, as people write them."""
    x = rng.uniform(-1000, 1000) * 10 ** rng.randint(-10, 10)
    text = rng.choice(["%.3f", "%.6e", "%.9e", "%.17e", "%r"]) % x
    if "e" not in text and "." not in text:
        text += ".0"
    if text in ("inf", "-inf", "nan"):
        text = "1.0"
    if "e" in text and "." not in text.split("e")[0]:
        m, e = text.split("e")
        text = m + ".0e" + e
    return text, ml.float_bits(float(text), name)


# ---- modules ----------------------------------------------------------------

class Case:
    def __init__(self, line, type_text, expected, element):
        self.line, self.type_text, self.expected, self.element = line, type_text, expected, element


def dense_case(type_name, spellings, bits, shape, splat=False):
    count = 1
    for d in shape:
        count *= d
    tensor = "tensor<%s%s>" % ("".join("%dx" % d for d in shape), type_name)
    if splat:
        body = spellings[0]
        values = [bits[0]] * max(count, 1)
    else:
        body = nest(spellings, shape)
        values = bits
    return Case(constant_of("dense<%s> : %s" % (body, tensor), type_name), tensor,
                ml.canonical(values, count), type_name)


def constant_of(literal, type_name):
    """A constant op holding `literal`: as its value, or (for the si types,
    which StableHLO's constant does not take) as an attribute of one."""
    if type_name.startswith("si"):
        return "stablehlo.constant {v = %s} dense<0> : tensor<i8>" % literal
    return "stablehlo.constant " + literal


def nest(items, shape):
    if not shape:
        return items[0]
    if len(shape) == 1:
        return "[" + ", ".join(items) + "]"
    step = len(items) // shape[0]
    return "[" + ", ".join(nest(items[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])) + "]"


def hex_blob_case(type_name, bits, count):
    kind = ml.element_kind(type_name)
    if kind[0] == "int" and kind[1] == 1:
        data = bytearray((count + 7) // 8)
        for i, b in enumerate(bits):
            data[i // 8] |= (b & 1) << (i % 8)
    else:
        size = ml.storage_bytes(kind)
        data = bytearray()
        for b in bits:
            if kind[0] == "complex":
                half = size // 2
                data += b[0].to_bytes(half, "little") + b[1].to_bytes(half, "little")
            else:
                data += b.to_bytes(size, "little")
    tensor = "tensor<%dx%s>" % (count, type_name)
    return Case(constant_of('dense<"0x%s"> : %s' % (data.hex().upper(), tensor), type_name),
                tensor, ml.canonical(list(bits), count), type_name)


def element_values(type_name, rng, n):
    """n (spelling, bits) pairs of one element type, edges first."""
    kind = ml.element_kind(type_name)
    out = []
    if kind[0] == "int":
        lo, hi = int_range(type_name)
        pool = int_edges(type_name)
        while len(pool) < n:
            pool.append(rng.randint(lo, hi))
        for v in pool[:n]:
            out.append(int_literal(v, type_name, rng))
    elif kind[0] == "float":
        pool = float_edges(type_name)
        while len(pool) < n:
            pool.append(random_float_bits(type_name, rng))
        for b in pool[:n]:
            if rng.random() < 0.15 and ml.FLOAT_FORMATS[type_name][0] >= 16:
                out.append(random_decimal(type_name, rng))
            else:
                out.append(float_spelling(b, type_name, rng))
        # f8E8M0FNU and the like cannot spell 0 in decimal: fine, bits are hex
    else:
        parts = element_values(kind[1][1], rng, 2 * n)
        for i in range(n):
            (rs, rb), (is_, ib) = parts[2 * i], parts[2 * i + 1]
            out.append(("(%s, %s)" % (rs, is_), (rb, ib)))
    return out


def bit_width_of(kind):
    return ml.bit_width(kind)


def cases_for(type_name, rng):
    cases = []
    values = element_values(type_name, rng, 24)
    spell = [s for s, _ in values]
    bits = [b for _, b in values]
    cases.append(dense_case(type_name, spell, bits, [len(spell)]))
    cases.append(dense_case(type_name, spell[:12], bits[:12], [3, 4]))
    for s, b in values[:6]:
        cases.append(dense_case(type_name, [s], [b], [5], splat=True))
        cases.append(dense_case(type_name, [s], [b], [], splat=True))
    big = element_values(type_name, rng, 130)
    cases.append(dense_case(type_name, [s for s, _ in big], [b for _, b in big], [130]))
    cases.append(hex_blob_case(type_name, [b for _, b in big][:120], 120))
    kind = ml.element_kind(type_name)
    if kind[0] != "complex" and (bit_width_of(kind) % 8 == 0 or type_name == "i1"):
        # scalar attributes and dense arrays of the type
        attrs, arr = [], []
        expected = []
        for i, (s, b) in enumerate(values[:8]):
            if kind[0] == "float" and not s.startswith("0x") and "." not in s:
                continue
            if type_name == "i1":  # `1 : i1` for attributes, true in arrays
                attrs.append("a%02d = %d : i1" % (i, b))
                s = "true" if b else "false"
            else:
                attrs.append("a%02d = %s : %s" % (i, s, type_name))
            expected.append(b)
            arr.append(s)
        line = "stablehlo.constant {%s, zz = array<%s: %s>} dense<0> : tensor<i8>" % (
            ", ".join(attrs), type_name, ", ".join(arr))
        cases.append(Case(line, "attrs", tuple(expected), type_name))
    return cases


def module_text(cases):
    lines = ["func.func @main() {"]
    for i, case in enumerate(cases):
        lines.append("  %%v%d = %s" % (i, case.line))
    lines.append("  return")
    lines.append("}")
    return "\n".join(lines) + "\n"


DENSE_ARRAY = ml.re.compile(r"array<([^:>]+): ([^>]*)>")


def read_back(case, line):
    """The values the printed op line holds, in the form of case.expected."""
    if case.type_text != "attrs":
        lits = [l for l in ml.literals(line, strict=False) if l[0] == case.type_text]
        return lits[0][1] if lits else None
    scalars = [vals[0] for t, vals in ml.literals(line, strict=False) if not t.startswith("tensor<")]
    if case.element == "i1":  # printed `a00 = true`, without a type
        scalars = [1 if v == "true" else 0 for v in ml.re.findall(r"\ba\d\d = (true|false)", line)]
    arrays = DENSE_ARRAY.findall(line)
    kind = ml.element_kind(case.element)
    arr_bits = []
    for name, body in arrays:
        for tok in body.split(", "):
            neg = tok.startswith("-")
            arr_bits.append(ml.scalar_bits(tok.lstrip("-"), neg, kind) if tok not in ("true", "false")
                            else (1 if tok == "true" else 0))
    if tuple(scalars) != tuple(arr_bits):
        return ("attributes and array differ", tuple(scalars), tuple(arr_bits))
    return tuple(scalars)


def run(tool, text):
    p = subprocess.run([tool, "-"], input=text.encode(), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--opt", required=True)
    parser.add_argument("--oracle", help="sdy_opt: the printed text must equal its")
    parser.add_argument("--seed", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    checked = collections.Counter()
    failures = []
    oracle_diffs = 0
    for round_ in range(args.rounds):
        for type_name in INT_TYPES + FLOAT_TYPES + COMPLEX_TYPES:
            cases = cases_for(type_name, rng)
            text = module_text(cases)
            status, out, err = run(args.opt, text)
            if status != 0:
                failures.append("%s: shardlab-opt failed: %s" % (type_name, err.strip()[:300]))
                continue
            lines = [l for l in out.split("\n") if "stablehlo.constant" in l]
            if len(lines) != len(cases):
                failures.append("%s: %d constants printed for %d" % (type_name, len(lines), len(cases)))
                continue
            for case, line in zip(cases, lines):
                got = read_back(case, line)
                if got != case.expected:
                    failures.append("%s: %s\n    printed %s\n    expected %r\n    read     %r" % (
                        type_name, case.line[:200], line.strip()[:200],
                        str(case.expected)[:200], str(got)[:200]))
                else:
                    n = len(case.expected) if case.expected[:1] != ("splat",) else 1
                    checked[type_name] += n if case.type_text != "attrs" else 2 * n
            if args.oracle:
                o_status, o_out, o_err = run(args.oracle, text)
                if o_status != 0:
                    failures.append("%s: the oracle refused the module: %s" % (type_name, o_err.strip()[:300]))
                elif o_out.rstrip("\n") != out.rstrip("\n"):
                    oracle_diffs += 1
                    for mine, theirs in zip(out.split("\n"), o_out.split("\n")):
                        if mine != theirs:
                            failures.append("%s: printed differently from sdy_opt:\n    shardlab %s\n    sdy_opt  %s"
                                            % (type_name, mine.strip()[:300], theirs.strip()[:300]))
                            break
    print("%-16s %10s" % ("element type", "literals"))
    for name in INT_TYPES + FLOAT_TYPES + COMPLEX_TYPES:
        print("%-16s %10d" % (name, checked[name]))
    print("%-16s %10d" % ("total", sum(checked.values())))
    if args.oracle:
        print("modules printed differently from sdy_opt: %d of %d" % (
            oracle_diffs, args.rounds * len(INT_TYPES + FLOAT_TYPES + COMPLEX_TYPES)))
    for f in failures[:12]:
        print("FAIL " + f)
    if failures:
        print("%d failures" % len(failures))
        return 1
    print("every value survived")
    return 0


if __name__ == "__main__":
    sys.exit(main())
