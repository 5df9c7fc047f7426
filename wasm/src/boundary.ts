// How texts and replies cross into and out of the WebAssembly instance.
//
// A module text is encoded to UTF-8 straight into the instance's memory
// (TextEncoder.encodeInto, native; no intermediate array and copy: 0.6 ms of
// a 10k-op `check`); the binding reads it in place as (pointer, length).
// The reply comes back as a view of the instance's memory, read into a
// string with one call (replyText: Latin-1 in Node when it is ASCII,
// TextDecoder otherwise). Embind's
// std::string conversions instead copy a Uint8Array in and scan a reply out
// one byte at a time in JavaScript: on a 10k-op module that was most of the
// gap between the WASM and native times of a `check` (bench/RESULTS.md).
import type { RawShardlabModule } from "./shardlab.mjs";

/** The text-taking entry points of the raw module. */
export type TextCall =
  | "check"
  | "run"
  | "execute"
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

/** Node's Buffer, where there is one (not in browsers). */
type NodeBufferClass = {
  from(
    memory: ArrayBufferLike,
    offset: number,
    length: number,
  ): { toString(encoding: "latin1"): string };
};
const nodeBuffer = (globalThis as { Buffer?: NodeBufferClass }).Buffer;

/**
 * The reply view as a string. An ASCII reply (nearly all: the module text
 * inside is escaped JSON) is its own Latin-1 text, which Node copies into a
 * string; TextDecoder validates and decodes UTF-8 instead. In Node 20 the
 * copy is as fast below about 1 MB and much faster above, where Node makes
 * it an external string: 0.07 ms against 0.80 ms for 1.2 MB (6% of a
 * 10k-op `check`), 0.33 against 2.9 ms for 5 MB.
 */
function replyText(raw: RawShardlabModule, view: Uint8Array): string {
  if (nodeBuffer && raw.replyIsAscii())
    return nodeBuffer
      .from(view.buffer, view.byteOffset, view.length)
      .toString("latin1");
  return decoder.decode(view);
}

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
  const { ptr, length } = copyIn(raw, text);
  try {
    const view = raw[name](ptr, length, optionsJson ?? "");
    // The view is the binding's reply buffer, valid until the next call.
    return replyText(raw, view);
  } finally {
    raw._free(ptr);
  }
}

/**
 * Encodes `text` as UTF-8 into memory malloc'd in the instance (the caller
 * frees `ptr`). Most texts are ASCII, one byte per UTF-16 unit: that much
 * room is tried first; a text with other characters is encoded again into
 * room for the worst case (3 bytes per unit).
 */
function copyIn(
  raw: RawShardlabModule,
  text: string,
): { ptr: number; length: number } {
  for (const perUnit of [1, 3]) {
    const room = text.length * perUnit;
    // malloc(0) may return 0; one spare byte keeps the pointer valid.
    const ptr = raw._malloc(room + 1);
    if (ptr === 0) throw new Error("out of memory for the module text");
    // Read HEAPU8 after malloc: growing the memory replaces the view.
    const { read, written } = utf8.encodeInto(
      text,
      raw.HEAPU8.subarray(ptr, ptr + room),
    );
    if (read === text.length) return { ptr, length: written };
    raw._free(ptr);
  }
  throw new Error("could not encode the module text");
}
