// Highlighting for MLIR text with the StableHLO and sdy dialects: a small
// stream tokenizer (comments, strings, SSA values, symbols, attribute
// aliases like #sdy.sharding, types, op names, numbers).
import { StreamLanguage, type StreamParser } from "@codemirror/language";

const TYPE_WORDS = /^(tensor|f16|bf16|f32|f64|i1|i8|i16|i32|i64|ui8|ui32|index|complex|tuple|f8E4M3FN|f8E5M2)\b/;

const parser: StreamParser<unknown> = {
  name: "mlir",
  token(stream) {
    if (stream.eatSpace()) return null;
    if (stream.match("//")) {
      stream.skipToEnd();
      return "comment";
    }
    if (stream.match(/^"(?:[^"\\]|\\.)*"?/)) return "string";
    if (stream.match(/^%[\w$.#-]+/)) return "variableName";
    if (stream.match(/^\^[\w$.-]+/)) return "labelName";
    if (stream.match(/^@[\w$.-]+/)) return "definition";
    if (stream.match(/^#[\w.]+/)) return "meta";
    if (stream.match(/^!\w[\w.]*/)) return "typeName";
    if (stream.match(/^(stablehlo|sdy|func|mhlo|chlo|builtin)\.[\w.]+/)) return "keyword";
    if (stream.match(TYPE_WORDS)) return "typeName";
    if (stream.match(/^-?\d+(\.\d+)?([eE][-+]?\d+)?/)) return "number";
    if (stream.match(/^(module|return|true|false|replicated|unreduced|device_ids|out_sharding|in_shardings|out_shardings|manual_axes)\b/)) return "atom";
    if (stream.match(/^[\w]+/)) return null;
    if (stream.match(/^->|^[?=:,]/)) return "operator";
    stream.next();
    return "punctuation";
  },
};

export const mlir = StreamLanguage.define(parser);
