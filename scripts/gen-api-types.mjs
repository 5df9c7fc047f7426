#!/usr/bin/env node
// Prints wasm/src/api-types.ts: the TypeScript types of every request and
// reply of shardlab's JSON API, generated from the JSON Schemas in
// schemas/api/ (the source of truth) and schemas/perf_table.schema.json.
//
//   node scripts/gen-api-types.mjs > wasm/src/api-types.ts
//   node scripts/gen-api-types.mjs --cpp > core/src/api/request_fields.h
//
// Each schemas/api/*.schema.json holds named `$defs` (unique across files;
// a reference to another file is `other.schema.json#/$defs/Name`) and
// `x-methods`: the JS methods whose arguments and replies those defs are.
// The defs are merged into one schema and compiled with
// json-schema-to-typescript; the methods become the `ShardlabApi`
// interface. With --cpp it prints the fields of each request object for
// the core, which rejects any other field. tests/js/api-types.test.mjs fails when the committed file is
// stale, and tests/js/helpers.mjs validates every reply against its schema.
import { readFileSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(join(root, "wasm", "package.json"));
const { compile } = require("json-schema-to-typescript");

/** Every schemas/api file, parsed, in name order. */
export function apiSchemas() {
  const dir = join(root, "schemas", "api");
  return readdirSync(dir)
    .filter((name) => name.endsWith(".schema.json"))
    .sort()
    .map((name) => ({ name, schema: JSON.parse(readFileSync(join(dir, name), "utf8")) }));
}

/** The perf table schema, with its own defs renamed PerfTable_<name>. */
export function perfTableSchema() {
  const schema = JSON.parse(readFileSync(join(root, "schemas", "perf_table.schema.json"), "utf8"));
  return schema;
}

/** `ref` pointing into the merged schema's $defs. */
function localRef(ref) {
  const m = /^(?:[\w.-]+\.schema\.json)?#\/\$defs\/(\w+)$/.exec(ref);
  if (m) return `#/$defs/${m[1]}`;
  if (ref === "../perf_table.schema.json") return "#/$defs/PerfTable";
  throw new Error(`gen-api-types: cannot resolve $ref ${ref}`);
}

function rewriteRefs(node, rewrite) {
  if (Array.isArray(node)) return node.map((n) => rewriteRefs(n, rewrite));
  if (node === null || typeof node !== "object") return node;
  const out = {};
  for (const [key, value] of Object.entries(node))
    out[key] = key === "$ref" ? rewrite(value) : rewriteRefs(value, rewrite);
  return out;
}

/** All defs of all files in one schema (names must be unique). */
export function mergedSchema() {
  const defs = {};
  const add = (name, def, file) => {
    if (defs[name]) throw new Error(`gen-api-types: $defs/${name} defined twice (${file})`);
    defs[name] = def;
  };
  const table = perfTableSchema();
  const tableRef = (ref) => ref.replace(/^#\/\$defs\/(\w+)$/, "#/$defs/PerfTable_$1");
  for (const [name, def] of Object.entries(table.$defs ?? {}))
    add(`PerfTable_${name}`, rewriteRefs(def, tableRef), "perf_table.schema.json");
  const { $defs: _, $schema: __, $id: ___, title: ____, ...tableRoot } = table;
  add("PerfTable", rewriteRefs(tableRoot, tableRef), "perf_table.schema.json");
  for (const { name, schema } of apiSchemas())
    for (const [defName, def] of Object.entries(schema.$defs ?? {}))
      add(defName, rewriteRefs(def, localRef), name);
  return { $defs: defs };
}

/** The TS type of a method's parameter or reply schema. */
function typeOf(schema) {
  if (schema.$ref) return localRef(schema.$ref).slice("#/$defs/".length);
  if (schema.type === "array") return `${typeOf(schema.items)}[]`;
  if (schema.anyOf) return schema.anyOf.map(typeOf).join(" | ");
  if (schema.type === "string") return "string";
  if (schema.type === "number" || schema.type === "integer") return "number";
  if (schema.type === "boolean") return "boolean";
  throw new Error(`gen-api-types: no TS type for ${JSON.stringify(schema)}`);
}

function docComment(text, indent) {
  const lines = text.split("\n");
  return `${indent}/**\n${lines.map((l) => `${indent} * ${l}`.trimEnd()).join("\n")}\n${indent} */\n`;
}

/** The ShardlabApi interface from every file's x-methods. */
export function methodsInterface() {
  let out = "/** One instance of the WebAssembly module: every method of the API. */\n";
  out += "export interface ShardlabApi {\n";
  for (const { schema } of apiSchemas())
    for (const method of schema["x-methods"] ?? []) {
      const params = (method.params ?? [])
        .map((p) => `${p.name}${p.optional ? "?" : ""}: ${typeOf(p.schema)}`)
        .join(", ");
      out += docComment(method.description, "  ");
      out += `  ${method.name}(${params}): ${typeOf(method.reply)};\n`;
    }
  return out + "}\n";
}

export async function generate() {
  const types = await compile(mergedSchema(), "ApiSchemas", {
    bannerComment: "",
    unreachableDefinitions: true,
    additionalProperties: false,
    strictIndexSignatures: false,
    format: true,
    style: { printWidth: 100 },
  });
  // The merged root itself is no API type, and every def says it belongs
  // to it: drop both.
  const body = types
    .replace(/^export interface ApiSchemas \{[^}]*\}\n?/m, "")
    .replace(/^( \*\n)? \* This interface was referenced by `ApiSchemas`'s JSON-Schema\n \* via the `definition` "\w+".\n/gm, "")
    .replace(/^\/\*\*\n \*\/\n/gm, "");
  return (
    "// GENERATED by scripts/gen-api-types.mjs from schemas/api/*.schema.json and\n" +
    "// schemas/perf_table.schema.json: do not edit; change the schemas and run\n" +
    "//   node scripts/gen-api-types.mjs > wasm/src/api-types.ts\n" +
    "/* eslint-disable */\n\n" +
    body.trim() +
    "\n\n" +
    methodsInterface()
  );
}

/** The property names of a request def, through allOf and $ref. */
function propertyNames(def, defs) {
  if (def.$ref) return propertyNames(defs[localRef(def.$ref).slice("#/$defs/".length)], defs);
  const names = Object.keys(def.properties ?? {});
  for (const part of def.allOf ?? []) names.push(...propertyNames(part, defs));
  return names;
}

/**
 * core/src/api/request_fields.h: the fields each request object may have,
 * so that the core rejects a misspelled option naming the ones it takes.
 * Requests are the object parameters of the x-methods and the defs marked
 * "x-request" (objects nested in a request).
 */
export function requestFieldsHeader() {
  const defs = mergedSchema().$defs;
  const requests = new Set();
  for (const { schema } of apiSchemas())
    for (const method of schema["x-methods"] ?? [])
      for (const param of method.params ?? [])
        if (param.schema.$ref) requests.add(localRef(param.schema.$ref).slice("#/$defs/".length));
  // Request objects nested in a request (a compare's phase) say so.
  for (const [name, def] of Object.entries(defs)) if (def["x-request"]) requests.add(name);
  let out =
    "// GENERATED by scripts/gen-api-types.mjs --cpp from schemas/api/: do not\n" +
    "// edit; change the schemas and run\n" +
    "//   node scripts/gen-api-types.mjs --cpp > core/src/api/request_fields.h\n" +
    "// The fields each request object of the JSON API may have (an object\n" +
    "// parameter of a method in the schemas' x-methods), for OptionReader's\n" +
    "// rejectUnknown.\n" +
    "#pragma once\n\n#include <string_view>\n\n// clang-format off\nnamespace shardlab::api::detail::fields {\n";
  for (const name of [...requests].sort()) {
    const names = [...new Set(propertyNames(defs[name], defs))].sort();
    out += `\ninline constexpr std::string_view k${name}[] = {\n`;
    out += names.map((n) => `    "${n}",\n`).join("");
    out += "};\n";
  }
  return out + "\n} // namespace shardlab::api::detail::fields\n// clang-format on\n";
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === "--cpp") {
  process.stdout.write(requestFieldsHeader());
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  generate().then(
    (text) => process.stdout.write(text),
    (error) => {
      console.error(String(error?.stack ?? error));
      process.exit(1);
    },
  );
}
