// How texts and replies cross into and out of the WebAssembly instance.
//
// A module text is encoded to UTF-8 once (TextEncoder, native) and copied
// into the instance's memory with one `HEAPU8.set` (a native memcpy); the
// binding reads it in place as (pointer, length). The reply comes back as a
// view of the instance's memory, decoded with one TextDecoder call. Embind's
// std::string conversions instead copy a Uint8Array in and scan a reply out
// one byte at a time in JavaScript: on a 10k-op module that was most of the
// gap between the WASM and native times of a `check` (bench/RESULTS.md).
import type { RawShardlabModule } from "./shardlab.mjs";

/** The text-taking entry points of the raw module. */
export type TextCall =
  | "check"
  | "run"
  | "loadTable"
  | "playground"
  | "schedule"
  | "shardingReport"
  | "opFactors"
  | "valueLayout"
  | "propagationTrace"
  | "dataflowGraph"
  | "compareStrategies"
  | "suggestShardings";

const utf8 = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Calls `name` with `text` and an options JSON string (check and
 * shardingReport take none); returns the reply JSON as a string. Throws what the
 * instance throws (the typed API turns that into a failure value).
 */
export function callWithText(
  raw: RawShardlabModule,
  name: TextCall,
  text: string,
  optionsJson?: string,
): string {
  const bytes = utf8.encode(text);
  // malloc(0) may return 0; one spare byte keeps the pointer valid.
  const ptr = raw._malloc(bytes.length + 1);
  if (ptr === 0) throw new Error("out of memory for the module text");
  try {
    // Read HEAPU8 after malloc: growing the memory replaces the view.
    raw.HEAPU8.set(bytes, ptr);
    const view = raw[name](ptr, bytes.length, optionsJson ?? "");
    // The view is the binding's reply buffer, valid until the next call.
    return decoder.decode(view);
  } finally {
    raw._free(ptr);
  }
}
