// Which parts of the output module changed against the (printed) input: a
// line alignment on each line's "skeleton" (the text before its first '{',
// i.e. the op without its sharding attributes), then per aligned pair the
// span between the common prefix and suffix. Unaligned output lines (ops a
// pipeline inserted, such as collectives) are changed as a whole.

export interface LineChange {
  /** 1-based output line. */
  line: number;
  /** 0-based columns [from, to) of the changed span in that line. */
  from: number;
  to: number;
  inserted: boolean;
}

function skeleton(line: string): string {
  const brace = line.indexOf("{");
  return (brace < 0 ? line : line.slice(0, brace)).trim();
}

/** Pairs of (input index, output index) of aligned lines. */
export function alignLines(a: string[], b: string[]): [number, number][] {
  const ka = a.map(skeleton), kb = b.map(skeleton);
  if (a.length === b.length && ka.every((k, i) => k === kb[i])) return a.map((_, i) => [i, i]);
  const n = a.length, m = b.length;
  if (n * m > 4_000_000) return a.slice(0, Math.min(n, m)).map((_, i) => [i, i]);
  // LCS table over skeletons (rows of Uint32 to keep it compact).
  const dp = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      dp[i][j] = ka[i] === kb[j] ? dp[i + 1][j + 1] + 1 : Math.max(dp[i + 1][j], dp[i][j + 1]);
  const pairs: [number, number][] = [];
  let i = 0, j = 0;
  while (i < n && j < m) {
    if (ka[i] === kb[j]) pairs.push([i++, j++]);
    else if (dp[i + 1][j] >= dp[i][j + 1]) i++;
    else j++;
  }
  return pairs;
}

/** The changed spans of `output` against `input` (both printed modules). */
export function changedSpans(input: string, output: string): LineChange[] {
  const a = input.split("\n"), b = output.split("\n");
  const changes: LineChange[] = [];
  const aligned = new Set<number>();
  for (const [i, j] of alignLines(a, b)) {
    aligned.add(j);
    const x = a[i], y = b[j];
    if (x === y) continue;
    let p = 0;
    while (p < x.length && p < y.length && x[p] === y[p]) p++;
    let s = 0;
    while (s < x.length - p && s < y.length - p && x[x.length - 1 - s] === y[y.length - 1 - s]) s++;
    changes.push({ line: j + 1, from: p, to: y.length - s, inserted: false });
  }
  b.forEach((y, j) => {
    if (!aligned.has(j) && y.trim()) changes.push({ line: j + 1, from: 0, to: y.length, inserted: true });
  });
  return changes.sort((u, v) => u.line - v.line);
}
