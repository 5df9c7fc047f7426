"""Collectives a module's per-device program runs, counted from its exported
text alone (no scheduler), for the corpus runner's schedule check.

Counted: sdy collectives, and StableHLO collectives whose groups have more
than one device (or that have source/target pairs). A `call @f` counts f's
collectives at each call site; a stablehlo.while counts its body's
collectives times its trip count, derived here from the text:

    %c = sdy.constant dense<0>, %c_1 = sdy.constant dense<4>, %c_0 = ... <1>
    stablehlo.while(%i = %c, ...)  cond { compare LT, %i, %c_1 }
                                   do { %n = stablehlo.add %i, %c_0 ... }
    -> ceil((4 - 0) / 1) = 4 trips

or from XLA's `known_trip_count` backend config; a loop counted neither way
runs once (the scheduler's assumption without --while-trip-count). A
case/if whose branches hold the same collectives counts them once; when
they differ the count is unknown (None), since the scheduler picks the
costliest branch, a question of cost. Modules still in GSPMD form are None
too (count them after -xla-sdy-stablehlo-import-pipeline, as the scheduler
imports them first).

The text must be shardlab-opt's pretty output: two-space indentation, one
op per line, a region's closing brace at its op's indentation.
"""
import math
import re

KINDS = {"all_gather": "all-gather", "all_reduce": "all-reduce",
         "reduce_scatter": "reduce-scatter", "all_to_all": "all-to-all",
         "collective_permute": "collective-permute"}
SDY = re.compile(r"\bsdy\.(all_gather|all_reduce|reduce_scatter|all_to_all|"
                 r"collective_permute)\b")
STABLEHLO_GROUPED = re.compile(
    r'"stablehlo\.(all_gather|all_reduce|reduce_scatter|all_to_all|collective_permute)"'
    r'[^\n]*?(?:replica_groups|source_target_pairs) = dense<[^>]*> : tensor<(\d+)x(\d+)x')
FUNC = re.compile(r'^(\s*)func\.func\b[^@]*@("[^"]*"|[^\s(]+)\(')
CALL = re.compile(r'\bcall @("[^"]*"|[^\s(]+)\(')
WHILE = re.compile(r"^(\s*)(?:%\S+ = )?stablehlo\.while\((.*?)\) :")
BRANCHES = re.compile(r'^(\s*)(?:%\S+ = )?"?stablehlo\.(case|if)\b')
KNOWN_TRIPS = re.compile(r'known_trip_count\\?"\s*:\s*\{\\?"n\\?"\s*:\s*\\?"(\d+)')


class Unknown(Exception):
    """The count depends on something the text does not settle."""


def indent(line):
    return len(line) - len(line.lstrip(" "))


def add(total, counts, times=1):
    for kind, n in counts.items():
        total[kind] = total.get(kind, 0) + n * times


class Module:
    def __init__(self, text):
        self.lines = text.split("\n")
        self.funcs = {}
        for i, line in enumerate(self.lines):
            m = FUNC.match(line)
            if m and line.rstrip().endswith("{"):
                self.funcs[m.group(2).strip('"')] = (i + 1, self.close(i))
        self.memo = {}
        self.active = set()

    def close(self, i, closer="}"):
        """Index of the line that closes the region opened on line i."""
        pad = " " * indent(self.lines[i])
        for j in range(i + 1, len(self.lines)):
            if self.lines[j].startswith(pad + closer) and indent(self.lines[j]) == len(pad):
                return j
        raise Unknown("unclosed region at line %d" % (i + 1))

    def func(self, name):
        if name in self.memo:
            return self.memo[name]
        if name in self.active or name not in self.funcs:
            raise Unknown("recursive or unknown callee @" + name)
        self.active.add(name)
        counts = self.count(*self.funcs[name])
        self.active.discard(name)
        self.memo[name] = counts
        return counts

    def count(self, lo, hi):
        """Collectives of lines [lo, hi), loops and calls expanded."""
        total = {}
        i = lo
        while i < hi:
            line = self.lines[i]
            loop = WHILE.match(line)
            branches = BRANCHES.match(line)
            if loop:
                i = self.count_while(i, loop, total)
                continue
            if branches:
                i = self.count_branches(i, total)
                continue
            for name in SDY.findall(line):
                add(total, {KINDS[name]: 1})
            for name, _, cols in STABLEHLO_GROUPED.findall(line):
                if name == "collective_permute" or int(cols) > 1:
                    add(total, {KINDS[name]: 1})
            for callee in CALL.findall(line):
                add(total, self.func(callee.strip('"')))
            i += 1
        return total

    def count_while(self, i, loop, total):
        pad = loop.group(1)
        do = next((j for j in range(i + 1, len(self.lines))
                   if self.lines[j] == pad + "} do {"), None)
        if do is None:
            raise Unknown("while without a body at line %d" % (i + 1))
        end = self.close(do)
        trips = self.trip_count(i, loop.group(2), do, end)
        add(total, self.count(do + 1, end), trips)
        return end + 1

    def count_branches(self, i, total):
        pad = " " * indent(self.lines[i])
        end = self.close(i, "})")
        starts = [i] + [j for j in range(i + 1, end) if self.lines[j] == pad + "}, {"]
        counts = [self.count(a + 1, b) for a, b in zip(starts, starts[1:] + [end])]
        if any(c != counts[0] for c in counts):
            raise Unknown("branches with different collectives at line %d" % (i + 1))
        add(total, counts[0])
        return end + 1

    def constant(self, name, before, region=None):
        """Integer value of %name defined as a constant before line `before`,
        searched in [region) first and then outwards."""
        pattern = re.compile(r"^\s*%s = (?:stablehlo|sdy)\.constant dense<(-?\d+)>" %
                             re.escape(name))
        lo, hi = region if region else (0, before)
        for j in range(hi - 1, lo - 1, -1):
            m = pattern.match(self.lines[j])
            if m:
                return int(m.group(1))
        return self.constant(name, before) if region else None

    def trip_count(self, i, operands, do, end):
        known = KNOWN_TRIPS.search(self.lines[i])
        inits = dict(re.findall(r"(%[\w$.-]+) = (%[\w$.#-]+)", operands))
        for j in range(i + 1, do):
            m = re.search(r"stablehlo\.compare\s+(LT|LE),\s*(%[\w$.-]+),\s*(%[\w$.-]+)",
                          self.lines[j])
            if not m or m.group(2) not in inits:
                continue
            arg = m.group(2)
            bound = self.constant(m.group(3), i, (i + 1, j))
            start = self.constant(inits[arg], i)
            step = None
            for k in range(do + 1, end):
                s = re.search(r"stablehlo\.add %s, (%%[\w$.-]+)" % re.escape(arg),
                              self.lines[k])
                if s:
                    step = self.constant(s.group(1), k, (do + 1, k))
            if None not in (bound, start, step) and step > 0:
                span = bound - start + (1 if m.group(1) == "LE" else 0)
                return max(0, math.ceil(span / step))
        return int(known.group(1)) if known else 1


def count_or_why(text):
    """(counts, None), or (None, why the text does not settle them)."""
    if "mhlo.sharding" in text:
        return None, "still in GSPMD form"
    module = Module(text)
    entry = "main" if "main" in module.funcs else None
    if entry is None:
        public = [n for n, (lo, _) in module.funcs.items()
                  if "private" not in module.lines[lo - 1]]
        if len(public) != 1:
            return None, "no @main and %d public functions" % len(public)
        entry = public[0]
    try:
        return {k: v for k, v in module.func(entry).items() if v}, None
    except Unknown as e:
        return None, str(e)


def collective_counts(text):
    """Collectives per kind that the entry function (@main, or the only
    public one) runs; None when the text does not settle it."""
    return count_or_why(text)[0]


def unknown_why(text):
    """Why collective_counts(text) is None ("" when it is not)."""
    return count_or_why(text)[1] or ""
