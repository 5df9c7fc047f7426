// The sdy sharding and mesh syntax as data, for the structured editor:
// parse `#sdy.sharding<@mesh, [{"x", ?}p1, {}], replicated={"y"}>` and
// `<["x"=2, "y"=4]>`, print them back, and find (or make room for) the
// sharding of the value at a position in the module text.

export interface Axis {
  name: string;
  /** Sub-axis `"x":(pre)size`. */
  sub?: { pre: number; size: number };
}

export interface Dim {
  axes: Axis[];
  open: boolean;
  priority?: number;
}

export interface Sharding {
  /** `@mesh` or an inline `mesh<...>`, kept verbatim. */
  mesh: string;
  dims: Dim[];
  replicated: Axis[];
  /** Kept verbatim (`unreduced={...}` or `unreduced=max{...}`), "" if none. */
  unreduced: string;
}

export interface MeshAxis {
  name: string;
  size: number;
}

export class ParseError extends Error {}

class Cursor {
  pos = 0;
  constructor(readonly text: string) {}
  ws(): void {
    while (this.pos < this.text.length && /\s/.test(this.text[this.pos])) this.pos++;
  }
  peek(s: string): boolean {
    this.ws();
    return this.text.startsWith(s, this.pos);
  }
  eat(s: string): boolean {
    if (!this.peek(s)) return false;
    this.pos += s.length;
    return true;
  }
  expect(s: string): void {
    if (!this.eat(s)) throw new ParseError(`expected '${s}' at ${this.pos}: ${this.text.slice(this.pos, this.pos + 20)}`);
  }
  int(): number {
    this.ws();
    const m = /^\d+/.exec(this.text.slice(this.pos));
    if (!m) throw new ParseError(`expected a number at ${this.pos}`);
    this.pos += m[0].length;
    return Number(m[0]);
  }
  str(): string {
    this.expect('"');
    const end = this.text.indexOf('"', this.pos);
    if (end < 0) throw new ParseError("unterminated string");
    const s = this.text.slice(this.pos, end);
    this.pos = end + 1;
    return s;
  }
  /** Text up to the bracket that closes the one just consumed. */
  balanced(open: string, close: string): string {
    const start = this.pos;
    let depth = 1;
    while (this.pos < this.text.length && depth > 0) {
      const c = this.text[this.pos++];
      if (c === open) depth++;
      else if (c === close) depth--;
    }
    return this.text.slice(start, this.pos - 1);
  }
}

function parseAxis(c: Cursor): Axis {
  const name = c.str();
  if (!c.eat(":")) return { name };
  c.expect("(");
  const pre = c.int();
  c.expect(")");
  return { name, sub: { pre, size: c.int() } };
}

function parseAxes(c: Cursor, close: string): { axes: Axis[]; open: boolean } {
  const axes: Axis[] = [];
  let open = false;
  while (!c.peek(close)) {
    if (c.eat("?")) open = true;
    else axes.push(parseAxis(c));
    if (!c.eat(",")) break;
  }
  c.expect(close);
  return { axes, open };
}

function parseBody(c: Cursor): Sharding {
  let mesh: string;
  c.ws();
  if (c.eat("@")) {
    const m = /^[\w$.-]+/.exec(c.text.slice(c.pos));
    if (!m) throw new ParseError("expected a mesh name");
    c.pos += m[0].length;
    mesh = "@" + m[0];
  } else if (c.eat("mesh<")) {
    mesh = "mesh<" + c.balanced("<", ">") + ">";
  } else throw new ParseError("expected @mesh or mesh<...>");
  c.expect(",");
  c.expect("[");
  const dims: Dim[] = [];
  while (!c.peek("]")) {
    c.expect("{");
    const { axes, open } = parseAxes(c, "}");
    const dim: Dim = { axes, open };
    if (c.peek("p") && /^p\d/.test(c.text.slice(c.pos))) {
      c.eat("p");
      dim.priority = c.int();
    }
    dims.push(dim);
    if (!c.eat(",")) break;
  }
  c.expect("]");
  let replicated: Axis[] = [];
  let unreduced = "";
  while (c.eat(",")) {
    if (c.eat("replicated")) {
      c.expect("=");
      c.expect("{");
      replicated = parseAxes(c, "}").axes;
    } else if (c.peek("unreduced")) {
      const start = c.pos;
      c.pos = c.text.indexOf("{", c.pos) + 1;
      c.balanced("{", "}");
      unreduced = c.text.slice(start, c.pos).trim();
    } else throw new ParseError(`unexpected text at ${c.pos}`);
  }
  return { mesh, dims, replicated, unreduced };
}

/** Parses the body of `<...>` of a sharding (between the angle brackets). */
export function parseShardingBody(text: string): Sharding {
  const c = new Cursor(text);
  const s = parseBody(c);
  c.ws();
  if (c.pos !== text.length) throw new ParseError(`unexpected text at ${c.pos}`);
  return s;
}

export function axisText(a: Axis): string {
  return a.sub ? `"${a.name}":(${a.sub.pre})${a.sub.size}` : `"${a.name}"`;
}

export function dimText(d: Dim): string {
  const items = d.axes.map(axisText);
  if (d.open) items.push("?");
  return `{${items.join(", ")}}${d.priority !== undefined ? `p${d.priority}` : ""}`;
}

/** The body text `@mesh, [...], replicated={...}`. */
export function shardingBodyText(s: Sharding): string {
  let text = `${s.mesh}, [${s.dims.map(dimText).join(", ")}]`;
  if (s.replicated.length) text += `, replicated={${s.replicated.map(axisText).join(", ")}}`;
  if (s.unreduced) text += `, ${s.unreduced}`;
  return text;
}

/** Parses `<["x"=2, "y"=4], device_ids=[...]>` (axes only; the rest is kept by the caller). */
export function parseMeshAxes(text: string): MeshAxis[] {
  const axes: MeshAxis[] = [];
  const re = /"([^"]+)"\s*=\s*(\d+)/g;
  const list = /\[([^\]]*)\]/.exec(text);
  if (!list) return axes;
  for (const m of list[1].matchAll(re)) axes.push({ name: m[1], size: Number(m[2]) });
  return axes;
}

export function meshAxesText(axes: MeshAxis[]): string {
  return `[${axes.map((a) => `"${a.name}"=${a.size}`).join(", ")}]`;
}

/** A `sdy.mesh @name = <...>` declaration in the text. */
export interface MeshDecl {
  name: string;
  axes: MeshAxis[];
  /** Offsets of the `[...]` axis list. */
  from: number;
  to: number;
}

export function findMeshes(text: string): MeshDecl[] {
  const out: MeshDecl[] = [];
  const re = /sdy\.mesh\s+@([\w$.-]+)\s*=\s*<(\[[^\]]*\])/g;
  for (const m of text.matchAll(re)) {
    const from = (m.index ?? 0) + m[0].length - m[2].length;
    out.push({ name: m[1], axes: parseMeshAxes(m[2]), from, to: from + m[2].length });
  }
  return out;
}

/** Where the sharding of one value is written in the text. */
export interface ShardingSite {
  /** Offsets of the body between `<` and `>` (or where to insert one). */
  from: number;
  to: number;
  sharding: Sharding | null;
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
      return site(text, lt + 1, gt, dims, "argument", name);
    }
  }
  return {
    from: typeEnd, to: typeEnd, sharding: null, rank: dims.length, dims,
    prefix: " {sdy.sharding = #sdy.sharding<", suffix: ">}", kind: "argument", name,
  };
}

function site(text: string, from: number, to: number, dims: number[], kind: ShardingSite["kind"], name: string): ShardingSite {
  let sharding: Sharding | null = null;
  try {
    sharding = parseShardingBody(text.slice(from, to));
  } catch {
    sharding = null;
  }
  return { from, to, sharding, rank: dims.length, dims, prefix: "", suffix: "", kind, name };
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
    return site(text, lt + 1, gt, dims, "result", name);
  }
  if (typeColon < 0 || /\{/.test(line.slice(0, typeColon).replace(/dense<[^>]*>/g, ""))) return null;
  const at = lineStart + typeColon;
  return {
    from: at, to: at, sharding: null, rank: dims.length, dims,
    prefix: " {sdy.sharding = #sdy.sharding_per_value<[<", suffix: ">]>}", kind: "result", name,
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

/** The text with the site's sharding replaced by `s`. */
export function writeSharding(text: string, where: ShardingSite, s: Sharding): string {
  const body = shardingBodyText(s);
  const replaced = where.from === where.to ? where.prefix + body + where.suffix : body;
  return text.slice(0, where.from) + replaced + text.slice(where.to);
}
