// Where the playground's state lives between visits: the URL hash (a share
// link: `#code=<lz-string>&pipeline=...`, non-default settings only) and
// local storage (the last state, used when the URL has none).
import { compressToEncodedURIComponent, decompressFromEncodedURIComponent } from "lz-string";

export interface Settings {
  pipeline: string;
  preset: string;
  gpus_per_node: number;
  sol_options: string;
  overlap_limit: number;
  estimator: "real" | "approximate";
  /** Iterations of a while loop whose trip count cannot be derived (0: one). */
  while_trip_count: number;
  /** Cost the kernels XLA's GPU compiler fuses (false: every op on its own). */
  fusion: boolean;
  /** The Gantt draws each loop body once, marked ×N (display only). */
  fold_loops: boolean;
}

export interface AppState {
  text: string;
  example: string;
  settings: Settings;
}

export const DEFAULT_SETTINGS: Settings = {
  pipeline: "pipeline",
  preset: "h100",
  gpus_per_node: 0,
  sol_options: "",
  overlap_limit: 1,
  estimator: "real",
  while_trip_count: 0,
  fusion: true,
  fold_loops: true,
};

const STORAGE_KEY = "shardlab-playground-v1";

/** The hash for `state`: the text and only the settings that differ from the defaults. */
export function encodeHash(state: AppState): string {
  const params = new URLSearchParams();
  params.set("code", compressToEncodedURIComponent(state.text));
  for (const [key, value] of Object.entries(state.settings))
    if (value !== DEFAULT_SETTINGS[key as keyof Settings]) params.set(key, String(value));
  return "#" + params.toString();
}

export function decodeHash(hash: string): Partial<AppState> | null {
  const params = new URLSearchParams(hash.replace(/^#/, ""));
  const code = params.get("code");
  if (code === null) return null;
  const text = decompressFromEncodedURIComponent(code);
  if (text === null) return null;
  const settings: Settings = { ...DEFAULT_SETTINGS };
  for (const key of Object.keys(DEFAULT_SETTINGS) as (keyof Settings)[]) {
    const value = params.get(key);
    if (value === null) continue;
    if (typeof DEFAULT_SETTINGS[key] === "number") {
      const n = Number(value);
      if (Number.isFinite(n)) (settings[key] as number) = n;
    } else if (typeof DEFAULT_SETTINGS[key] === "boolean") (settings[key] as boolean) = value === "true";
    else (settings[key] as string) = value;
  }
  return { text, settings, example: "" };
}

export function saveLocal(state: AppState): void {
  try {
    localStorage.setItem(STORAGE_KEY, JSON.stringify(state));
  } catch {
    /* storage full or disabled: the URL still holds the state */
  }
}

export function loadLocal(): AppState | null {
  try {
    const raw = localStorage.getItem(STORAGE_KEY);
    if (!raw) return null;
    const parsed = JSON.parse(raw) as AppState;
    if (typeof parsed.text !== "string") return null;
    return { text: parsed.text, example: parsed.example ?? "", settings: { ...DEFAULT_SETTINGS, ...parsed.settings } };
  } catch {
    return null;
  }
}
