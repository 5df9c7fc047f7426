// The structured editor: the sharding of the value under the cursor (axes
// per dimension, open/closed, priority, replicated axes, sub-axes) and the
// meshes' axes, each change written back into the module text. The core
// parses the texts into values and prints the edited values back
// (parseShardings / printShardings), so what is written is what the core
// prints.
import type {
  AxisValue as Axis, Failure, MeshValue, ParsedShardings, PrintedShardings, PrintShardingsRequest,
  ShardingValue as Sharding,
} from "@shardlab/wasm";
import { h, fill } from "../dom";
import { findMeshes, findShardingSite, shardingEdit, type MeshDecl, type ShardingSite } from "../sharding-model";

type MeshAxis = MeshValue["axes"][number];

/** The core's sharding syntax, through the worker. */
export interface SyntaxCore {
  /** Parses; null when a newer render superseded this one. */
  parse(shardings: string[], meshes: string[]): Promise<ParsedShardings | Failure | null>;
  print(request: PrintShardingsRequest): Promise<PrintedShardings | Failure>;
}

/** A mesh declaration with its parsed value (null when it does not parse). */
interface MeshSite extends MeshDecl {
  mesh: MeshValue | null;
}

/** A text edit: replace [from, to) with insert. */
export interface Edit {
  from: number;
  to: number;
  insert: string;
}

function subAxes(axis: MeshAxis): Axis[] {
  const out: Axis[] = [];
  for (let pre = 1; pre < axis.size; pre++)
    for (let size = 2; pre * size <= axis.size; size++)
      if (axis.size % (pre * size) === 0 && !(pre === 1 && size === axis.size))
        out.push({ name: axis.name, sub: { pre_size: pre, size } });
  return out;
}

/** Whether two axis refs share devices (same axis, overlapping sub-ranges). */
function overlaps(a: Axis, b: Axis): boolean {
  if (a.name !== b.name) return false;
  if (!a.sub || !b.sub) return true;
  return Math.max(a.sub.pre_size, b.sub.pre_size) < Math.min(a.sub.pre_size * a.sub.size, b.sub.pre_size * b.sub.size);
}

/** An axis as a label (`"x"`, `"x":(1)2`), as the sharding shows it. */
function axisText(a: Axis): string {
  return a.sub ? `"${a.name}":(${a.sub.pre_size})${a.sub.size}` : `"${a.name}"`;
}

function meshAxesOf(meshes: MeshSite[], sharding: Sharding): MeshAxis[] {
  if ("inline" in sharding.mesh) return sharding.mesh.inline.axes;
  const symbol = sharding.mesh.symbol;
  return meshes.find((m) => m.name === symbol)?.mesh?.axes ?? [];
}

function defaultSharding(meshes: MeshSite[], rank: number): Sharding | null {
  if (!meshes.length) return null;
  return {
    mesh: { symbol: meshes[0].name },
    dims: Array.from({ length: rank }, () => ({ axes: [], closed: true })),
    replicated: [],
    unreduced: [],
    unreduced_kind: "sum",
  };
}

function used(s: Sharding): Axis[] {
  return [...s.dims.flatMap((d) => d.axes), ...s.replicated];
}

function axisPicker(label: string, choices: Axis[], onPick: (a: Axis) => void, testid: string): HTMLSelectElement {
  const select = h("select", { "aria-label": label, "data-testid": testid },
    h("option", { value: "" }, "+ axis"),
    choices.map((a, i) => h("option", { value: String(i) }, axisText(a))));
  select.addEventListener("change", () => {
    const i = Number(select.value);
    if (select.value !== "" && choices[i]) onPick(choices[i]);
  });
  return select;
}

function chip(axis: Axis, onRemove: () => void, what: string): HTMLElement {
  return h("span", { class: "chip" }, axisText(axis),
    h("button", { type: "button", class: "chip-x", "aria-label": `remove ${axisText(axis)} from ${what}`, onclick: onRemove }, "×"));
}

function shardingSection(where: ShardingSite, parsed: Sharding | null, printed: string, meshes: MeshSite[], core: SyntaxCore, write: (e: Edit) => void): HTMLElement {
  const current = parsed ?? defaultSharding(meshes, where.rank);
  if (!current) return h("p", { class: "muted" }, "The module declares no mesh: add `sdy.mesh @mesh = <[\"x\"=2]>` first.");
  const axes = meshAxesOf(meshes, current);
  const all: Axis[] = axes.flatMap((a) => [{ name: a.name }, ...subAxes(a)]);
  const free = all.filter((a) => !used(current).some((u) => overlaps(u, a)));
  const commit = async (next: Sharding) => {
    const r = await core.print({ shardings: [next] });
    if (r.ok) write(shardingEdit(where, r.shardings[0]));
  };
  const clone = (): Sharding => structuredClone(current);
  const symbol = "symbol" in current.mesh ? current.mesh.symbol : null;
  const rows = current.dims.map((dim, d) =>
    h("tr", { "data-testid": `dim-${d}` },
      h("th", { scope: "row" }, `dim ${d}`, h("span", { class: "muted" }, ` (${where.dims[d] ?? "?"})`)),
      h("td", {}, dim.axes.map((a, k) => chip(a, () => { const n = clone(); n.dims[d].axes.splice(k, 1); void commit(n); }, `dim ${d}`)),
        axisPicker(`add an axis to dim ${d}`, free, (a) => { const n = clone(); n.dims[d].axes.push(a); void commit(n); }, `add-axis-${d}`)),
      h("td", {}, h("label", {},
        h("input", { type: "checkbox", checked: !dim.closed, "data-testid": `open-${d}`,
          onchange: (e: Event) => { const n = clone(); n.dims[d].closed = !(e.target as HTMLInputElement).checked; void commit(n); } }),
        " open (?)")),
      h("td", {}, h("label", {}, "priority p",
        h("input", { type: "number", min: 0, max: 99, class: "num", value: dim.priority ?? "", "aria-label": `priority of dim ${d}`, "data-testid": `priority-${d}`,
          onchange: (e: Event) => {
            const v = (e.target as HTMLInputElement).value;
            const n = clone();
            if (v === "") delete n.dims[d].priority; else n.dims[d].priority = Math.max(0, Math.floor(Number(v)));
            void commit(n);
          } })))));
  const replicated = h("div", { class: "row" }, h("span", {}, "replicated: "),
    current.replicated.map((a, k) => chip(a, () => { const n = clone(); n.replicated.splice(k, 1); void commit(n); }, "replicated")),
    axisPicker("add a replicated axis", free, (a) => { const n = clone(); n.replicated.push(a); void commit(n); }, "add-replicated"));
  return h("div", {},
    h("p", {}, h("strong", {}, where.name), ` (${where.kind}) on `,
      h("select", { "aria-label": "mesh", "data-testid": "mesh-select",
        onchange: (e: Event) => {
          const n = clone();
          n.mesh = { symbol: (e.target as HTMLSelectElement).value };
          n.dims.forEach((x) => (x.axes = []));
          n.replicated = [];
          void commit(n);
        } },
        meshes.map((m) => h("option", { value: m.name, selected: m.name === symbol }, "@" + m.name)),
        symbol === null ? h("option", { value: "", selected: true }, "inline mesh") : null)),
    parsed ? null : h("p", { class: "muted" }, where.body ? "Its sharding does not parse: any change below replaces it." : "No sharding yet: any change below adds one."),
    h("table", { class: "grid-table" }, h("tbody", {}, rows)),
    replicated,
    h("p", {}, h("code", { "data-testid": "sharding-text" }, `#sdy.sharding${printed}`)),
    current.unreduced.length ? h("p", { class: "muted" }, `unreduced axes kept: ${current.unreduced.map(axisText).join(", ")}`) : null);
}

function meshSection(meshes: MeshSite[], core: SyntaxCore, write: (e: Edit) => void): HTMLElement {
  return h("div", {}, meshes.map((m) => {
    if (!m.mesh) return h("p", { class: "muted" }, `mesh @${m.name} does not parse`);
    const mesh = m.mesh;
    const commit = async (axes: MeshAxis[]) => {
      const r = await core.print({ meshes: [{ ...mesh, axes }] });
      if (r.ok) write({ from: m.from, to: m.to, insert: r.meshes[0] });
    };
    return h("fieldset", { class: "mesh" }, h("legend", {}, `mesh @${m.name}`),
      mesh.axes.map((a, i) => h("div", { class: "row" },
        h("input", { value: a.name, "aria-label": `name of axis ${i} of @${m.name}`, class: "name",
          onchange: (e: Event) => { const v = (e.target as HTMLInputElement).value.replace(/"/g, "").trim(); if (v) void commit(mesh.axes.map((x, j) => (j === i ? { ...x, name: v } : x))); } }),
        " = ",
        h("input", { type: "number", min: 1, value: a.size, class: "num", "aria-label": `size of axis ${a.name}`, "data-testid": `mesh-size-${a.name}`,
          onchange: (e: Event) => { const v = Math.max(1, Math.floor(Number((e.target as HTMLInputElement).value))); void commit(mesh.axes.map((x, j) => (j === i ? { ...x, size: v } : x))); } }),
        h("button", { type: "button", "aria-label": `remove axis ${a.name}`, onclick: () => void commit(mesh.axes.filter((_, j) => j !== i)) }, "remove"))),
      h("button", { type: "button", onclick: () => {
        let k = 0;
        while (mesh.axes.some((x) => x.name === `a${k}`)) k++;
        void commit([...mesh.axes, { name: `a${k}`, size: 2 }]);
      } }, "+ axis"));
  }));
}

export async function renderShardingEditor(root: HTMLElement, text: string, line: number, column: number, write: (e: Edit) => void, core: SyntaxCore): Promise<void> {
  const where = findShardingSite(text, line, column);
  const decls = findMeshes(text);
  const parsed = await core.parse(where?.body ? [where.body] : [], decls.map((m) => text.slice(m.from, m.to)));
  if (parsed === null) return; // a newer render is on its way
  if (!parsed.ok) {
    fill(root, h("p", { class: "error" }, parsed.error));
    return;
  }
  const meshes: MeshSite[] = decls.map((d, i) => {
    const p = parsed.meshes[i];
    return { ...d, mesh: p && p.ok ? p.mesh : null };
  });
  const first = parsed.shardings[0];
  const sharding = first && first.ok ? first.sharding : null;
  const shown = sharding ?? (where ? defaultSharding(meshes, where.rank) : null);
  const printed = shown ? await core.print({ shardings: [shown] }) : null;
  fill(root,
    h("h2", {}, "Sharding of the value at the cursor"),
    where ? shardingSection(where, sharding, printed?.ok ? printed.shardings[0] : "", meshes, core, write)
      : h("p", { class: "muted" }, `Line ${line} defines no value: put the cursor on a func argument or an op result.`),
    h("h2", {}, "Meshes"),
    meshSection(meshes, core, write));
}
