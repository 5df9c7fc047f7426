// The Web Worker that owns the WebAssembly core: the page posts
// {id, method, args} and gets {id, result, ms} back. Every method returns a
// plain value (errors are values), so nothing here throws at the page.
import { load, type Shardlab } from "@shardlab/wasm";

export type Method =
  | "playground"
  | "opFactors"
  | "valueLayout"
  | "propagationTrace"
  | "schedule"
  | "loadTable"
  | "hardwarePresets"
  | "version";

export interface Request {
  id: number;
  method: Method;
  args: unknown[];
}

export interface Response {
  id: number;
  result: unknown;
  ms: number;
}

const ready: Promise<Shardlab> = load();

function dispatch(sl: Shardlab, method: Method, args: unknown[]): unknown {
  const a = args as [never, never];
  switch (method) {
    case "playground": return sl.playground(...a);
    case "opFactors": return sl.opFactors(...a);
    case "valueLayout": return sl.valueLayout(...a);
    case "propagationTrace": return sl.propagationTrace(...a);
    case "schedule": return sl.schedule(...a);
    case "loadTable": return sl.loadTable(...a);
    case "hardwarePresets": return sl.hardwarePresets();
    case "version": return sl.version();
  }
  return { ok: false, error: `unknown method ${String(method)}` };
}

self.onmessage = async (event: MessageEvent<Request>) => {
  const { id, method, args } = event.data;
  const sl = await ready;
  const start = performance.now();
  let result: unknown;
  try {
    result = dispatch(sl, method, args);
  } catch (error) {
    result = { ok: false, error: String(error) };
  }
  const response: Response = { id, result, ms: performance.now() - start };
  (self as unknown as Worker).postMessage(response);
};
