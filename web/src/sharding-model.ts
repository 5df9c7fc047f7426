// Where shardings and meshes are written in the module text, for the
// structured editor: the `<...>` of the sharding of the value at a position
// (or where one goes) and of each `sdy.mesh` declaration. What those texts
// mean is the core's business: the editor has them parsed and printed by the
// core (parseShardings / printShardings), so there is one grammar.

/** A `sdy.mesh @name = <...>` declaration in the text. */
export interface MeshDecl {
  name: string;
  /** Offsets of its `<...>` (the brackets included). */
  from: number;
  to: number;
}

export function findMeshes(text: string): MeshDecl[] {
  const out: MeshDecl[] = [];
  for (const m of text.matchAll(/sdy\.mesh\s+@([\w$.-]+)\s*=\s*</g)) {
    const from = (m.index ?? 0) + m[0].length - 1;
    const close = closeOf(text, from, "<", ">");
    if (close > from) out.push({ name: m[1], from, to: close + 1 });
  }
  return out;
}

/** Where the sharding of one value is written in the text. */
export interface ShardingSite {
  /** Offsets of its `<...>`, brackets included (from === to: where to insert one). */
  from: number;
  to: number;
  /** That text (the core parses it), null when there is none yet. */
  body: string | null;
  /** Rank of the value's tensor type (from the text). */
  rank: number;
  dims: number[];
  /** Text to put around a new body when there is no sharding yet. */
  prefix: string;
  suffix: string;
  kind: "argument" | "result";
  name: string;
}

function closeOf(text: string, start: number, open: string, close: string): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    if (text[i] === open) depth++;
    else if (text[i] === close && --depth === 0) return i;
  }
  return -1;
}

function tensorDims(type: string): number[] {
  const m = /tensor<([^>]*)>/.exec(type);
  if (!m) return [];
  const parts = m[1].split("x");
  parts.pop();
  return parts.map((p) => (p === "?" ? -1 : Number(p)));
}

/** The func argument `%name: type {attrs}` starting at `at`. */
function argumentSite(text: string, at: number, name: string): ShardingSite | null {
  const colon = text.indexOf(":", at);
  const typeStart = colon + 1;
  const typeEnd = closeOf(text, text.indexOf("<", typeStart), "<", ">") + 1;
  if (colon < 0 || typeEnd <= 0) return null;
  const dims = tensorDims(text.slice(typeStart, typeEnd));
  const rest = text.slice(typeEnd);
  const attrs = /^\s*\{/.exec(rest);
  if (attrs) {
    const open = typeEnd + attrs[0].length - 1;
    const close = closeOf(text, open, "{", "}");
    const inner = text.slice(open, close);
    const k = inner.indexOf("#sdy.sharding<");
    if (k >= 0) {
      const lt = open + k + "#sdy.sharding".length;
      const gt = closeOf(text, lt, "<", ">");
      return site(text, lt, gt + 1, dims, "argument", name);
    }
  }
  return {
    from: typeEnd, to: typeEnd, body: null, rank: dims.length, dims,
    prefix: " {sdy.sharding = #sdy.sharding", suffix: "}", kind: "argument", name,
  };
}

function site(text: string, from: number, to: number, dims: number[], kind: ShardingSite["kind"], name: string): ShardingSite {
  return { from, to, body: text.slice(from, to), rank: dims.length, dims, prefix: "", suffix: "", kind, name };
}

/** The op result `%name = op ... : type` on the line at `lineStart`. */
function resultSite(text: string, lineStart: number, lineEnd: number, name: string): ShardingSite | null {
  const line = text.slice(lineStart, lineEnd);
  const typeColon = line.lastIndexOf(" : ");
  const typeText = typeColon >= 0 ? line.slice(typeColon + 3) : "";
  const arrow = typeText.lastIndexOf("->");
  const dims = tensorDims(arrow >= 0 ? typeText.slice(arrow) : typeText);
  const k = line.indexOf("#sdy.sharding_per_value<[<");
  if (k >= 0) {
    const lt = lineStart + k + "#sdy.sharding_per_value<[".length;
    const gt = closeOf(text, lt, "<", ">");
    return site(text, lt, gt + 1, dims, "result", name);
  }
  if (typeColon < 0 || /\{/.test(line.slice(0, typeColon).replace(/dense<[^>]*>/g, ""))) return null;
  const at = lineStart + typeColon;
  return {
    from: at, to: at, body: null, rank: dims.length, dims,
    prefix: " {sdy.sharding = #sdy.sharding_per_value<[", suffix: "]>}", kind: "result", name,
  };
}

/** The sharding site of the value defined at (1-based) line/column. */
export function findShardingSite(text: string, line: number, column: number): ShardingSite | null {
  const lines = text.split("\n");
  if (line < 1 || line > lines.length) return null;
  let lineStart = 0;
  for (let i = 0; i < line - 1; i++) lineStart += lines[i].length + 1;
  const lineText = lines[line - 1];
  const result = /^\s*(%[\w$.#-]+)(:\d+)?\s*=/.exec(lineText);
  // A func argument under (or before) the cursor?
  const args = [...lineText.matchAll(/(%[\w$.-]+)\s*:\s*tensor</g)];
  if (args.length && !result) {
    let pick = args[0];
    for (const a of args) if ((a.index ?? 0) < column) pick = a;
    return argumentSite(text, lineStart + (pick.index ?? 0), pick[1]);
  }
  if (result) return resultSite(text, lineStart, lineStart + lineText.length, result[1]);
  return null;
}

/** The edit that puts `body` (a printed `<...>`) where the site's sharding is or goes. */
export function shardingEdit(where: ShardingSite, body: string): { from: number; to: number; insert: string } {
  return { from: where.from, to: where.to, insert: where.from === where.to ? where.prefix + body + where.suffix : body };
}
