// The Web Worker that owns the WebAssembly core: the page posts
// {id, method, args} and gets {id, result, ms} back. Every method returns a
// plain value (errors are values), so nothing here throws at the page.
// Replies of the module-analysing methods are pure functions of their
// arguments and are kept for the last few argument sets: switching views
// back and forth, undo/redo to a text seen before, or reopening a tab costs
// no second propagation.
import { load, type Shardlab } from "@shardlab/wasm";

/** Any method of the API (its types are generated from schemas/api/). */
export type Method = keyof Shardlab;

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

const CACHED: ReadonlySet<Method> = new Set<Method>(["playground", "opFactors", "valueLayout", "propagationTrace", "schedule", "compareStrategies", "dataflowGraph"]);
const CACHE_SIZE = 8;
/** Newest last (a Map keeps insertion order): method + JSON of the args. */
const cache = new Map<string, unknown>();

function cachedDispatch(sl: Shardlab, method: Method, args: unknown[]): unknown {
  if (!CACHED.has(method)) return dispatch(sl, method, args);
  const key = `${method}\u0000${JSON.stringify(args)}`;
  if (cache.has(key)) {
    const hit = cache.get(key);
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  const result = dispatch(sl, method, args);
  cache.set(key, result);
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  return result;
}

function dispatch(sl: Shardlab, method: Method, args: unknown[]): unknown {
  const fn = sl[method] as unknown;
  if (typeof fn !== "function") return { ok: false, error: `unknown method ${String(method)}` };
  return (fn as (...a: unknown[]) => unknown)(...args);
}

self.onmessage = async (event: MessageEvent<Request>) => {
  const { id, method, args } = event.data;
  const start = performance.now();
  let result: unknown;
  try {
    // A core that failed to load (no memory for one more instance, say)
    // answers every call with why, rather than never.
    result = cachedDispatch(await ready, method, args);
  } catch (error) {
    result = { ok: false, error: String(error) };
  }
  const response: Response = { id, result, ms: performance.now() - start };
  (self as unknown as Worker).postMessage(response);
};
