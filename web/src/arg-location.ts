// Points a func argument's or result's sharding error at that argument.
// The verifier reports "'func.func' op arg N - ..." at the func.func op, as
// MLIR does (Shardy's lit tests expect that line, so the core keeps it);
// the editor squiggles the argument `%argN: tensor<..> {sdy.sharding = ..}`
// (or the Nth result type) instead, found by scanning the signature.
import type { Diagnostic } from "@shardlab/wasm";

const FUNC_VALUE = /^'func\.func' op (arg|result) (\d+) - /;
const OPEN = "([{<";
const CLOSE = ")]}>";

/** Offsets of the line starts of `text`. */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === "\n") starts.push(i + 1);
  return starts;
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && /\s/.test(text[i])) i++;
  return i;
}

/**
 * Start offsets of the top-level items of the list that opens at
 * `text[open] === "("`, and the offset just past its ")"; null if unclosed.
 * Strings are skipped and "->" is not a closing ">".
 */
function listItems(text: string, open: number): { items: number[]; end: number } | null {
  const items: number[] = [];
  let depth = 0;
  let itemStart = skipSpace(text, open + 1);
  if (text[itemStart] !== ")") items.push(itemStart);
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === "\\") i++;
    } else if (c === "-" && text[i + 1] === ">") {
      i++;
    } else if (OPEN.includes(c)) {
      depth++;
    } else if (CLOSE.includes(c)) {
      if (--depth === 0) return { items, end: i + 1 };
    } else if (c === "," && depth === 1) {
      itemStart = skipSpace(text, i + 1);
      items.push(itemStart);
    }
  }
  return null;
}

/** Offset of func argument or result `index` of the func.func at `from`. */
function funcValueOffset(text: string, from: number, kind: string, index: number): number | null {
  const name = text.indexOf("@", from);
  const open = name < 0 ? -1 : text.indexOf("(", name);
  if (open < 0) return null;
  const args = listItems(text, open);
  if (!args) return null;
  if (kind === "arg") return args.items[index] ?? null;
  let i = skipSpace(text, args.end);
  if (!text.startsWith("->", i)) return null;
  i = skipSpace(text, i + 2);
  if (text[i] !== "(") return index === 0 ? i : null;
  return listItems(text, i)?.items[index] ?? null;
}

/**
 * `diagnostics` with each func argument/result sharding error moved from
 * the func.func to that argument or result in `text` (the text the
 * diagnostics are about); others unchanged.
 */
export function refineFuncValueLocations(text: string, diagnostics: Diagnostic[]): Diagnostic[] {
  let starts: number[] | null = null;
  return diagnostics.map((d) => {
    const m = FUNC_VALUE.exec(d.message);
    if (!m || d.line <= 0) return d;
    starts ??= lineStarts(text);
    if (d.line > starts.length) return d;
    const at = funcValueOffset(text, starts[d.line - 1] + Math.max(d.column - 1, 0), m[1], Number(m[2]));
    if (at === null) return d;
    let line = d.line;
    while (line < starts.length && starts[line] <= at) line++;
    return { ...d, line, column: at - starts[line - 1] + 1 };
  });
}
