// The structured editor: the sharding of the value under the cursor (axes
// per dimension, open/closed, priority, replicated axes, sub-axes) and the
// meshes' axes, each change written back into the module text as valid
// sdy syntax.
import { h, fill } from "../dom";
import {
  findMeshes, findShardingSite, axisText, meshAxesText, shardingBodyText,
  type Axis, type MeshAxis, type Sharding, type ShardingSite,
} from "../sharding-model";

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
        out.push({ name: axis.name, sub: { pre, size } });
  return out;
}

/** Whether two axis refs share devices (same axis, overlapping sub-ranges). */
function overlaps(a: Axis, b: Axis): boolean {
  if (a.name !== b.name) return false;
  if (!a.sub || !b.sub) return true;
  return Math.max(a.sub.pre, b.sub.pre) < Math.min(a.sub.pre * a.sub.size, b.sub.pre * b.sub.size);
}

function meshAxesOf(text: string, sharding: Sharding): MeshAxis[] {
  if (sharding.mesh.startsWith("@")) {
    const decl = findMeshes(text).find((m) => "@" + m.name === sharding.mesh);
    return decl ? decl.axes : [];
  }
  return [...sharding.mesh.matchAll(/"([^"]+)"\s*=\s*(\d+)/g)].map((m) => ({ name: m[1], size: Number(m[2]) }));
}

function defaultSharding(text: string, rank: number): Sharding | null {
  const meshes = findMeshes(text);
  if (!meshes.length) return null;
  return { mesh: "@" + meshes[0].name, dims: Array.from({ length: rank }, () => ({ axes: [], open: false })), replicated: [], unreduced: "" };
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

function shardingSection(text: string, where: ShardingSite, write: (e: Edit) => void): HTMLElement {
  const current = where.sharding ?? defaultSharding(text, where.rank);
  if (!current) return h("p", { class: "muted" }, "The module declares no mesh: add `sdy.mesh @mesh = <[\"x\"=2]>` first.");
  if (current.dims.length !== where.rank && where.rank > 0 && !where.sharding) current.dims.length = where.rank;
  const axes = meshAxesOf(text, current);
  const all: Axis[] = axes.flatMap((a) => [{ name: a.name }, ...subAxes(a)]);
  const free = all.filter((a) => !used(current).some((u) => overlaps(u, a)));
  const commit = (next: Sharding) => {
    const body = shardingBodyText(next);
    write(where.from === where.to
      ? { from: where.from, to: where.to, insert: where.prefix + body + where.suffix }
      : { from: where.from, to: where.to, insert: body });
  };
  const clone = (): Sharding => JSON.parse(JSON.stringify(current));
  const rows = current.dims.map((dim, d) =>
    h("tr", { "data-testid": `dim-${d}` },
      h("th", { scope: "row" }, `dim ${d}`, h("span", { class: "muted" }, ` (${where.dims[d] ?? "?"})`)),
      h("td", {}, dim.axes.map((a, k) => chip(a, () => { const n = clone(); n.dims[d].axes.splice(k, 1); commit(n); }, `dim ${d}`)),
        axisPicker(`add an axis to dim ${d}`, free, (a) => { const n = clone(); n.dims[d].axes.push(a); commit(n); }, `add-axis-${d}`)),
      h("td", {}, h("label", {},
        h("input", { type: "checkbox", checked: dim.open, "data-testid": `open-${d}`,
          onchange: (e: Event) => { const n = clone(); n.dims[d].open = (e.target as HTMLInputElement).checked; commit(n); } }),
        " open (?)")),
      h("td", {}, h("label", {}, "priority p",
        h("input", { type: "number", min: 0, max: 99, class: "num", value: dim.priority ?? "", "aria-label": `priority of dim ${d}`, "data-testid": `priority-${d}`,
          onchange: (e: Event) => {
            const v = (e.target as HTMLInputElement).value;
            const n = clone();
            if (v === "") delete n.dims[d].priority; else n.dims[d].priority = Math.max(0, Math.floor(Number(v)));
            commit(n);
          } })))));
  const replicated = h("div", { class: "row" }, h("span", {}, "replicated: "),
    current.replicated.map((a, k) => chip(a, () => { const n = clone(); n.replicated.splice(k, 1); commit(n); }, "replicated")),
    axisPicker("add a replicated axis", free, (a) => { const n = clone(); n.replicated.push(a); commit(n); }, "add-replicated"));
  return h("div", {},
    h("p", {}, h("strong", {}, where.name), ` (${where.kind}) on `,
      h("select", { "aria-label": "mesh", "data-testid": "mesh-select",
        onchange: (e: Event) => { const n = clone(); n.mesh = (e.target as HTMLSelectElement).value; n.dims.forEach((x) => (x.axes = [])); n.replicated = []; commit(n); } },
        findMeshes(text).map((m) => h("option", { value: "@" + m.name, selected: "@" + m.name === current.mesh }, "@" + m.name)),
        current.mesh.startsWith("@") ? null : h("option", { value: current.mesh, selected: true }, "inline mesh"))),
    where.sharding ? null : h("p", { class: "muted" }, "No sharding yet: any change below adds one."),
    h("table", { class: "grid-table" }, h("tbody", {}, rows)),
    replicated,
    h("p", {}, h("code", { "data-testid": "sharding-text" }, `#sdy.sharding<${shardingBodyText(current)}>`)),
    current.unreduced ? h("p", { class: "muted" }, `unreduced axes kept: ${current.unreduced}`) : null);
}

function meshSection(text: string, write: (e: Edit) => void): HTMLElement {
  const meshes = findMeshes(text);
  return h("div", {}, meshes.map((m) => {
    const commit = (axes: MeshAxis[]) => write({ from: m.from, to: m.to, insert: meshAxesText(axes) });
    return h("fieldset", { class: "mesh" }, h("legend", {}, `mesh @${m.name}`),
      m.axes.map((a, i) => h("div", { class: "row" },
        h("input", { value: a.name, "aria-label": `name of axis ${i} of @${m.name}`, class: "name",
          onchange: (e: Event) => { const v = (e.target as HTMLInputElement).value.replace(/"/g, "").trim(); if (v) commit(m.axes.map((x, j) => (j === i ? { ...x, name: v } : x))); } }),
        " = ",
        h("input", { type: "number", min: 1, value: a.size, class: "num", "aria-label": `size of axis ${a.name}`, "data-testid": `mesh-size-${a.name}`,
          onchange: (e: Event) => { const v = Math.max(1, Math.floor(Number((e.target as HTMLInputElement).value))); commit(m.axes.map((x, j) => (j === i ? { ...x, size: v } : x))); } }),
        h("button", { type: "button", "aria-label": `remove axis ${a.name}`, onclick: () => commit(m.axes.filter((_, j) => j !== i)) }, "remove"))),
      h("button", { type: "button", onclick: () => {
        let k = 0;
        while (m.axes.some((x) => x.name === `a${k}`)) k++;
        commit([...m.axes, { name: `a${k}`, size: 2 }]);
      } }, "+ axis"));
  }));
}

export function renderShardingEditor(root: HTMLElement, text: string, line: number, column: number, write: (e: Edit) => void): void {
  const where = findShardingSite(text, line, column);
  fill(root, 
    h("h2", {}, "Sharding of the value at the cursor"),
    where ? shardingSection(text, where, write)
      : h("p", { class: "muted" }, `Line ${line} defines no value: put the cursor on a func argument or an op result.`),
    h("h2", {}, "Meshes"),
    meshSection(text, write));
}
