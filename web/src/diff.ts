// Which parts of the output module changed against the (printed) input: a
// line alignment on each line's "skeleton" (the text before its first '{'
// or " : ", i.e. the op without its sharding attributes and types), then per aligned pair the
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
  // The op without its attribute dict and its trailing type, so that an op
  // that only gained a sharding (`%0 = stablehlo.add %a, %b {sdy...} : t`)
  // keeps the skeleton it had (`%0 = stablehlo.add %a, %b : t`).
  let end = line.indexOf("{");
  const colon = line.indexOf(" : ");
  if (colon >= 0 && (end < 0 || colon < end)) end = colon;
  return (end < 0 ? line : line.slice(0, end)).trim();
}

/** How far ahead in the input the greedy alignment looks for a line. */
const WINDOW = 64;

/**
 * A linear-time alignment of ka[from, endA) and kb[from, endB) for large
 * differing middles (the full pipeline renumbers values and reorders
 * functions, so an LCS table of millions of cells would cost the update
 * hundreds of ms): each output line takes the next unused input line with
 * its skeleton within WINDOW lines after the last aligned one.
 */
function alignGreedy(ka: string[], kb: string[], from: number, endA: number, endB: number): [number, number][] {
  const where = new Map<string, number[]>();
  for (let i = endA - 1; i >= from; i--) {
    const list = where.get(ka[i]);
    if (list) list.push(i);
    else where.set(ka[i], [i]);
  }
  const pairs: [number, number][] = [];
  let last = from - 1;
  for (let j = from; j < endB; j++) {
    const list = where.get(kb[j]); // input indices, the smallest last
    if (!list) continue;
    while (list.length && list[list.length - 1] <= last) list.pop();
    const i = list[list.length - 1];
    if (i === undefined || i - last > WINDOW) continue;
    list.pop();
    pairs.push([i, j]);
    last = i;
  }
  return pairs;
}

/** Pairs of (input index, output index) of aligned lines. */
export function alignLines(a: string[], b: string[]): [number, number][] {
  const ka = a.map(skeleton), kb = b.map(skeleton);
  // Common head and tail align as they are (a pipeline inserts a few ops
  // somewhere in the middle); an LCS (or, when large, the greedy
  // alignment) runs on what lies between.
  let head = 0;
  while (head < ka.length && head < kb.length && ka[head] === kb[head]) head++;
  let tail = 0;
  while (tail < ka.length - head && tail < kb.length - head && ka[ka.length - 1 - tail] === kb[kb.length - 1 - tail]) tail++;
  const pairs: [number, number][] = [];
  for (let i = 0; i < head; i++) pairs.push([i, i]);
  const n = a.length - head - tail, m = b.length - head - tail;
  if (n > 0 && m > 0) {
    if (n * m > 250_000) pairs.push(...alignGreedy(ka, kb, head, head + n, head + m));
    else {
      // LCS table over skeletons (rows of Uint32 to keep it compact).
      const dp = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
      for (let i = n - 1; i >= 0; i--)
        for (let j = m - 1; j >= 0; j--)
          dp[i][j] = ka[head + i] === kb[head + j] ? dp[i + 1][j + 1] + 1 : Math.max(dp[i + 1][j], dp[i][j + 1]);
      let i = 0, j = 0;
      while (i < n && j < m) {
        if (ka[head + i] === kb[head + j]) pairs.push([head + i++, head + j++]);
        else if (dp[i + 1][j] >= dp[i][j + 1]) i++;
        else j++;
      }
    }
  }
  for (let t = tail; t > 0; t--) pairs.push([a.length - t, b.length - t]);
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
    while (p < x.length && p < y.length && x.charCodeAt(p) === y.charCodeAt(p)) p++;
    let s = 0;
    while (s < x.length - p && s < y.length - p && x.charCodeAt(x.length - 1 - s) === y.charCodeAt(y.length - 1 - s)) s++;
    changes.push({ line: j + 1, from: p, to: y.length - s, inserted: false });
  }
  b.forEach((y, j) => {
    if (!aligned.has(j) && y.trim()) changes.push({ line: j + 1, from: 0, to: y.length, inserted: true });
  });
  return changes.sort((u, v) => u.line - v.line);
}
