// The device grid: the mesh laid out (first axis down, the others across),
// each device showing the shard of the selected value it holds and that
// shard's offsets; devices holding the same shard share a colour, so
// replication is visible at a glance. Under it, the values each device
// holds around each collective (views/device-values.ts).
import { h, fill } from "../dom";
import type { ValueLayout } from "@shardlab/wasm";

const PALETTE = 12;

export function renderDevices(root: HTMLElement, layout: ValueLayout | null, before: boolean, onToggle: (before: boolean) => void, values: HTMLElement): void {
  const toggle = h("label", {}, h("input", { type: "checkbox", checked: before, "data-testid": "devices-before",
    onchange: (e: Event) => onToggle((e.target as HTMLInputElement).checked) }), " before propagation");
  if (!layout) return void fill(root, toggle, h("p", { class: "muted" }, "Put the cursor on a value."), values);
  if (!layout.ok) return void fill(root, toggle, h("p", { class: "muted" }, layout.error ?? "no value here"), values);
  const devices = layout.devices ?? [];
  const head = h("p", {}, toggle, " ",
    h("span", { class: "mono", "data-testid": "devices-sharding" }, layout.sharding || "no sharding (replicated on every device)"));
  const shapes = h("p", {}, `global ${JSON.stringify(layout.shape ?? [])} → local `,
    h("strong", { "data-testid": "local-shape" }, JSON.stringify(layout.local_shape ?? [])));
  if (!devices.length || !layout.mesh) return void fill(root, head, shapes, values);
  const axes = layout.mesh.axes;
  const rows = axes.length ? axes[0].size : 1;
  const cols = Math.max(1, devices.length / rows);
  const keys = new Map<string, number>();
  for (const d of devices) if (!keys.has(d.shard.join(","))) keys.set(d.shard.join(","), keys.size);
  const grid = h("div", { class: "device-grid", style: `grid-template-columns: repeat(${cols}, minmax(7em, 1fr))`, "data-testid": "device-grid", role: "list" },
    devices.map((d) => {
      const color = (keys.get(d.shard.join(",")) ?? 0) % PALETTE;
      const range = d.offsets.map((o, k) => `${o}:${o + d.sizes[k]}`).join(", ");
      return h("div", { class: `device c${color}`, role: "listitem", tabindex: 0, "data-testid": "device",
        title: `device ${d.id}\n${axes.map((a, k) => `${a.name}=${d.coords[k]}`).join(" ")}\nshard [${d.shard.join(", ")}]\nslice [${range}]` },
        h("div", { class: "dev-id" }, `dev ${d.id}`),
        h("div", { class: "muted" }, axes.map((a, k) => `${a.name}=${d.coords[k]}`).join(" ")),
        h("div", { class: "mono" }, `[${range}]`));
    }));
  fill(root, head, shapes,
    h("p", { class: "muted" }, `mesh @${layout.mesh.name} ${layout.mesh.axes.map((a) => `${a.name}=${a.size}`).join(" × ")}; ${keys.size} distinct shard(s) over ${devices.length} devices (same colour = same shard)`),
    grid, values);
}
