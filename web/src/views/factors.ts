// The factor table of the selected op: rows are operands and results,
// columns the factors of its sharding rule (size, kind), cells the axes
// sharding that factor; before propagation (the seed) and after it.
import { h, fill } from "../dom";
import type { FactorTable, FactorRowState } from "@shardlab/wasm";

function cell(state: FactorRowState, f: number, other?: FactorRowState): HTMLElement {
  const factor = state.factors[f];
  if (!factor || !factor.present) return h("td", { class: "muted" }, "—");
  const axes = factor.axes.join(", ") || "∅";
  const changed = other && other.factors[f] && other.factors[f].axes.join() !== factor.axes.join();
  return h("td", { class: changed ? "changed" : undefined, title: factor.closed ? "closed" : "open" },
    axes, factor.closed ? "" : " ?", factor.overflow.length ? h("span", { class: "muted" }, ` overflow ${factor.overflow.join(", ")}`) : null);
}

function table(t: FactorTable, which: "before" | "after", testid: string): HTMLElement {
  const factors = t.factors ?? [];
  const head = h("tr", {}, h("th", {}, "tensor"), h("th", {}, "dims → factors"),
    factors.map((f) => h("th", { title: f.kind }, `${f.symbol}=${f.size}`, h("div", { class: `kind kind-${f.kind}` }, f.kind))),
    h("th", {}, "replicated"), h("th", {}, "unreduced"));
  const rows = (t.rows ?? []).map((r) =>
    h("tr", {}, h("th", { scope: "row" }, r.tensor),
      h("td", { class: "mono" }, `[${r.dims.map((d) => d.map((f) => factors[f]?.symbol ?? f).join("") || "·").join(", ")}]`),
      factors.map((_, f) => cell(r[which], f, which === "after" ? r.before : undefined)),
      h("td", {}, r[which].replicated.join(", ")), h("td", {}, r[which].unreduced.join(", "))));
  return h("table", { class: "grid-table factor-table", "data-testid": testid }, h("thead", {}, head), h("tbody", {}, rows));
}

export function renderFactors(root: HTMLElement, t: FactorTable | null, line: number): void {
  if (!t) return void fill(root, h("p", { class: "muted" }, "Put the cursor on an op."));
  if (!t.ok) return void fill(root, h("p", { class: "muted", "data-testid": "factors-empty" }, t.error ?? `No op with a sharding rule on line ${line}.`));
  fill(root, 
    h("h2", {}, `${t.op} `, h("span", { class: "muted" }, `line ${t.line}`)),
    h("p", { class: "muted" }, "Rows: the op's operands and results. Columns: the factors of its sharding rule. Cells: the mesh axes sharding each factor (? = open)."),
    h("h3", {}, "Seed (before propagation)"),
    table(t, "before", "factors-before"),
    h("h3", {}, "After propagation ", h("span", { class: "muted" }, "(changed cells highlighted)")),
    table(t, "after", "factors-after"),
    t.mesh ? h("p", { class: "muted mono" }, `mesh ${t.mesh}`) : null);
}
