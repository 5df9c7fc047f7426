#!/usr/bin/env python3
"""An independent reader of MLIR literal values, for tests.

It turns every dense literal (`dense<...> : tensor<...>`) and scalar
attribute (`= 3 : i64`) of a module's text into the exact bits of each
element in its element type, so that a test can tell whether a value
changed between two texts, however each was spelled (decimal or hex, a
splat or a list, a hex blob).

It shares no code with shardlab's parser and takes its rounding from other
places: Python's float() for decimal -> f64 (correctly rounded, as LLVM's),
the struct module for f32 and f16, and for the other small formats a table
of every finite value of the format, searched for the nearest (ties to the
even encoding). MLIR reads a decimal literal as the nearest f64 and rounds
that to the element type; so does this reader.

Standard library only. `python3 mlir_literals.py FILE.mlir` prints what it
read, one literal per line.
"""
import bisect
import fractions
import math
import re
import struct
import sys

# name: (width, exponent bits, fraction bits, bias, non-finite kind, signed)
#   ieee: all-ones exponent is inf (fraction 0) or NaN
#   fn:   no inf; all-ones exponent and fraction is NaN
#   fnuz: no inf, no -0; the sign bit alone is NaN
#   none: finite values only
FLOAT_FORMATS = {
    "f64": (64, 11, 52, 1023, "ieee", True),
    "f32": (32, 8, 23, 127, "ieee", True),
    "f16": (16, 5, 10, 15, "ieee", True),
    "bf16": (16, 8, 7, 127, "ieee", True),
    "f8E5M2": (8, 5, 2, 15, "ieee", True),
    "f8E4M3": (8, 4, 3, 7, "ieee", True),
    "f8E3M4": (8, 3, 4, 3, "ieee", True),
    "f8E4M3FN": (8, 4, 3, 7, "fn", True),
    "f8E5M2FNUZ": (8, 5, 2, 16, "fnuz", True),
    "f8E4M3FNUZ": (8, 4, 3, 8, "fnuz", True),
    "f8E4M3B11FNUZ": (8, 4, 3, 11, "fnuz", True),
    "f8E8M0FNU": (8, 8, 0, 127, "fn", False),
    "f4E2M1FN": (4, 2, 1, 1, "none", True),
    "f6E2M3FN": (6, 2, 3, 1, "none", True),
    "f6E3M2FN": (6, 3, 2, 3, "none", True),
}


class LiteralError(ValueError):
    pass


# ---- float formats ---------------------------------------------------------

def float_value(bits, name):
    """The exact value (a Fraction), or 'nan' / 'inf' / '-inf'."""
    width, ebits, fbits, bias, kind, signed = FLOAT_FORMATS[name]
    sign = -1 if signed and bits >> (width - 1) & 1 else 1
    exp = (bits >> fbits) & ((1 << ebits) - 1)
    frac = bits & ((1 << fbits) - 1)
    top = (1 << ebits) - 1
    if kind == "ieee" and exp == top:
        return "nan" if frac else ("inf" if sign > 0 else "-inf")
    if kind == "fn" and exp == top and frac == (1 << fbits) - 1:
        return "nan"
    if kind == "fnuz" and bits == 1 << (width - 1):
        return "nan"
    if exp == 0 and fbits > 0:
        mag = fractions.Fraction(frac) * fractions.Fraction(2) ** (1 - bias - fbits)
    else:
        mag = fractions.Fraction((1 << fbits) | frac) * fractions.Fraction(2) ** (exp - bias - fbits)
    return sign * mag


_TABLES = {}


def _finite_table(name):
    """Sorted (value, bits) of every finite nonnegative encoding, and the
    overflow behaviour of the format."""
    if name not in _TABLES:
        width = FLOAT_FORMATS[name][0]
        signed = FLOAT_FORMATS[name][5]
        seen = {}
        for bits in range(1 << (width - 1 if signed else width)):
            v = float_value(bits, name)
            if isinstance(v, fractions.Fraction) and v not in seen:
                seen[v] = bits
        _TABLES[name] = sorted(seen.items())
    return _TABLES[name]


def _round_small(x, name):
    """Bits of the value of format `name` nearest to the float x."""
    width, ebits, fbits, bias, kind, signed = FLOAT_FORMATS[name]
    sign_bit = 1 << (width - 1) if signed else 0
    negative = math.copysign(1.0, x) < 0
    if math.isnan(x):
        raise LiteralError("NaN has no decimal literal")
    table = _finite_table(name)
    values = [v for v, _ in table]
    mag = fractions.Fraction(abs(x)) if math.isfinite(x) else None
    largest, largest_bits = table[-1]
    # the value one step above the largest finite, as if the exponent went on
    step = largest - table[-2][0]
    if mag is None or mag >= largest + step / 2:
        over = mag is None or mag > largest + step / 2 or (largest_bits & 1)
        if over:
            if kind == "ieee":
                return (sign_bit if negative else 0) | (((1 << ebits) - 1) << fbits)
            if kind == "none":
                return (sign_bit if negative else 0) | largest_bits
            if kind == "fnuz":
                return 1 << (width - 1)
            return (sign_bit if negative else 0) | (1 << (width - (1 if signed else 0))) - 1
        return (sign_bit if negative else 0) | largest_bits
    i = bisect.bisect_left(values, mag)
    if i < len(values) and values[i] == mag:
        bits = table[i][1]
    elif i == 0:
        bits = table[0][1]
    elif i == len(values):
        bits = largest_bits  # above the largest, below the overflow tie
    else:
        lo, hi = table[i - 1], table[i]
        dlo, dhi = mag - lo[0], hi[0] - mag
        bits = lo[1] if dlo < dhi or (dlo == dhi and lo[1] % 2 == 0) else hi[1]
    if bits == 0 and kind == "fnuz":
        return 0
    return (sign_bit if negative else 0) | bits


def float_bits(x, name):
    """Bits of the value of `name` nearest to the Python float x."""
    if name == "f64":
        return struct.unpack("<Q", struct.pack("<d", x))[0]
    if name == "f32":
        if math.isfinite(x) and abs(x) >= 2 ** 128 - 2 ** 103:  # past max + half ulp
            x = math.copysign(math.inf, x)
        return struct.unpack("<I", struct.pack("<f", x))[0]
    if name == "f16":
        if math.isfinite(x) and abs(x) >= 65520:
            x = math.copysign(math.inf, x)
        return struct.unpack("<H", struct.pack("<e", x))[0]
    return _round_small(x, name)


# ---- element types ---------------------------------------------------------

INT_TYPE = re.compile(r"^(si|ui|i)(\d+)$")


def element_kind(name):
    """('int', width, 'signless'|'signed'|'unsigned'), ('float', name),
    ('complex', part kind) or None."""
    if name == "index":
        return ("int", 64, "signless")
    m = INT_TYPE.match(name)
    if m:
        return ("int", int(m.group(2)),
                {"i": "signless", "si": "signed", "ui": "unsigned"}[m.group(1)])
    if name in FLOAT_FORMATS:
        return ("float", name)
    if name.startswith("complex<") and name.endswith(">"):
        part = element_kind(name[8:-1])
        return ("complex", part) if part else None
    return None


def storage_bytes(kind):
    if kind[0] == "int":
        return 1 if kind[1] == 1 else (kind[1] + 7) // 8
    if kind[0] == "float":
        return (FLOAT_FORMATS[kind[1]][0] + 7) // 8
    return 2 * storage_bytes(kind[1])


def bit_width(kind):
    return kind[1] if kind[0] == "int" else FLOAT_FORMATS[kind[1]][0]


# ---- tokens of a dense literal -----------------------------------------------

TOKEN = re.compile(r"\s*(0x[0-9A-Fa-f]+|-?\d+\.\d*(?:[eE][+-]?\d+)?|-?\d+|true|false|[\[\](),-])")


def tokens(body):
    pos, out = 0, []
    body = body.strip()
    while pos < len(body):
        m = TOKEN.match(body, pos)
        if not m:
            raise LiteralError("cannot read %r" % body[pos:pos + 20])
        out.append(m.group(1))
        pos = m.end()
        while pos < len(body) and body[pos].isspace():
            pos += 1
    return out


def scalar_bits(tok, negative, kind):
    """Bits of one element token of scalar kind `kind`."""
    if kind[0] == "int":
        width, signedness = kind[1], kind[2]
        if tok in ("true", "false"):
            return 1 if tok == "true" else 0
        v = int(tok, 0)
        v = -v if negative else v
        lo = -(1 << (width - 1)) if signedness != "unsigned" else 0
        hi = (1 << width) - 1 if signedness == "signless" else \
            ((1 << (width - 1)) - 1 if signedness == "signed" else (1 << width) - 1)
        if width == 1:
            lo, hi = 0, 1
        if not lo <= v <= hi:
            raise LiteralError("%s out of range" % tok)
        return v & ((1 << width) - 1)
    name = kind[1]
    if tok.startswith("0x"):
        return int(tok, 16)
    x = float(tok)
    return float_bits(-x if negative else x, name)


def parse_elements(body, kind):
    """The flat list of element values (tuples for complex) and whether the
    literal was a single (splat) element."""
    toks = tokens(body)
    i = 0
    flat = []
    scalar = kind[1] if kind[0] == "complex" else kind

    def element():
        nonlocal i
        negative = toks[i] == "-"
        if negative:
            i += 1
        t = toks[i]
        i += 1
        return scalar_bits(t.lstrip("-"), negative or t.startswith("-"), scalar)

    def item():
        nonlocal i
        if toks[i] == "[":
            i += 1
            while toks[i] != "]":
                item()
                if toks[i] == ",":
                    i += 1
            i += 1
        elif toks[i] == "(":
            i += 1
            re_ = element()
            assert toks[i] == ","
            i += 1
            im = element()
            assert toks[i] == ")"
            i += 1
            flat.append((re_, im))
        else:
            flat.append(element())

    if not toks:
        return [], False
    splat = toks[0] != "["
    item()
    return flat, splat


def parse_hex_blob(hex_text, kind, count):
    data = bytes.fromhex(hex_text[2:])
    if kind[0] == "int" and kind[1] == 1:
        if len(data) == 1 and data[0] in (0, 0xFF) and count != 1:
            return [data[0] & 1]
        return [(data[i // 8] >> (i % 8)) & 1 for i in range(count)]
    size = storage_bytes(kind)
    if len(data) == size:
        n = 1
    elif len(data) == size * count:
        n = count
    else:
        raise LiteralError("hex blob of %d bytes for %d elements" % (len(data), count))

    def part(chunk, k):
        v = int.from_bytes(chunk, "little")
        return v & ((1 << bit_width(k)) - 1)

    out = []
    for e in range(n):
        chunk = data[e * size:(e + 1) * size]
        if kind[0] == "complex":
            half = size // 2
            out.append((part(chunk[:half], kind[1]), part(chunk[half:], kind[1])))
        else:
            out.append(part(chunk, kind))
    return out


# ---- finding literals in a module ---------------------------------------------

def _match_angle(text, start):
    """Index just past the '>' closing the '<' at text[start - 1]."""
    depth, i = 1, start
    while i < len(text):
        c = text[i]
        if c == '"':
            i = text.index('"', i + 1)
        elif c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise LiteralError("unterminated <")


DENSE = re.compile(r"(?<![\w.])dense<")
TENSOR_TYPE = re.compile(r"\s*:\s*tensor<")
SCALAR_ATTR = re.compile(
    r"=\s*(-?(?:0x[0-9A-Fa-f]+|\d+\.\d*(?:[eE][+-]?\d+)?|\d+))\s*:\s*"
    r"(index|[su]?i\d+|f\d+|bf16|f8E\w+|f[46]E\w+)\b")


def tensor_shape(type_text):
    """(element type, element count) of `tensor<2x3xf32>`."""
    inner = type_text[len("tensor<"):-1]
    dims = []
    while True:
        m = re.match(r"(\d+)x", inner)
        if not m:
            break
        dims.append(int(m.group(1)))
        inner = inner[m.end():]
    if "," in inner and not inner.startswith("complex<"):
        inner = inner.split(",")[0]  # an encoding follows
    count = 1
    for d in dims:
        count *= d
    return inner.strip(), count


def strip_comments(text):
    """`text` without its `//` comments (a lit test's CHECK lines hold
    literals the module does not)."""
    out = []
    for line in text.split("\n"):
        in_string, i = False, 0
        while i < len(line):
            c = line[i]
            if c == "\\" and in_string:
                i += 2
                continue
            if c == '"':
                in_string = not in_string
            elif not in_string and line.startswith("//", i):
                line = line[:i]
                break
            i += 1
        out.append(line)
    return "\n".join(out)


def canonical(values, count):
    """One splat value stands for `count` equal elements."""
    if count > 0 and len(values) in (1, count) and all(v == values[0] for v in values):
        return ("splat", values[0], count)
    return tuple(values)


def literals(text, strict=True):
    """[(type text, tuple of element bits)] for every dense literal whose
    element type is modelled, and every scalar attribute, in text order.
    Not `strict`: a literal that cannot be read (a value out of its type's
    range, say) is listed as ("unreadable", its text) instead of raising."""
    found = []
    text = strip_comments(text)
    for m in DENSE.finditer(text):
        end = _match_angle(text, m.end())
        body = text[m.end():end - 1]
        t = TENSOR_TYPE.match(text, end)
        if not t:
            continue  # dense<...> without a tensor type (not an elements attr)
        type_end = _match_angle(text, t.end())
        type_text = text[t.end() - len("tensor<"):type_end]
        element, count = tensor_shape(type_text)
        kind = element_kind(element)
        if kind is None:
            continue
        body = body.strip()
        try:
            if body.startswith('"'):
                values = canonical(parse_hex_blob(body.strip('"'), kind, count), count)
            else:
                values, splat = parse_elements(body, kind)
                if splat and len(values) != 1:
                    raise LiteralError("a splat of %d values" % len(values))
                if not splat and len(values) != count:
                    raise LiteralError("%d values for %d elements" % (len(values), count))
                values = canonical(values, count)
        except LiteralError:
            if strict:
                raise
            values = ("unreadable", body)
        found.append((type_text, values))
    for m in SCALAR_ATTR.finditer(text):
        kind = element_kind(m.group(2))
        tok = m.group(1)
        if kind[0] == "float" and not tok.startswith("0x") and "." not in tok:
            continue
        try:
            bits = scalar_bits(tok.lstrip("-"), tok.startswith("-"), kind)
        except LiteralError:
            if strict:
                raise
            bits = ("unreadable", tok)
        found.append((m.group(2), (bits,)))
    return found


def changed_literals(source, printed):
    """The literals of `source` whose values `printed` does not have (as a
    multiset: passes may reorder attributes), by element type."""
    from collections import Counter
    have = Counter(literals(printed, strict=False))
    lost = Counter()
    for lit in literals(source):
        if have[lit] > 0:
            have[lit] -= 1
        else:
            lost[lit] += 1
    return lost


if __name__ == "__main__":
    for path in sys.argv[1:]:
        with open(path, encoding="utf-8") as f:
            for type_text, values in literals(f.read()):
                shown = ", ".join(str(v) for v in values[:8])
                print("%s: %s%s" % (type_text, shown, " ..." if len(values) > 8 else ""))
