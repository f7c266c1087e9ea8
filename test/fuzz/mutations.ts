// Boundary variations of a valid body: one change at one place, chosen by the generator. Each keeps
// a label saying what was changed where, for the failure report.
import fc from "fast-check";
import type { Schema } from "./document.ts";

/** Strings that break naive code: lone surrogates, RTL overrides, emoji sequences, NUL, a BOM. */
export const NASTY_STRINGS = [
  "\ud800",
  "a\udfffb",
  "\udc00\ud800",
  "\u202eevil\u202c",
  "שלום עולם",
  "👩‍👩‍👧‍👦🏳️‍🌈",
  "e\u0301".repeat(300),
  "\u0000",
  "nul\u0000in",
  "\ufeffbom",
  "\u200b\u200d\u2060",
  "𝕳𝖊𝖗𝖆𝖑𝖉",
  "' OR 1=1 --",
  "%00%2e%2e%2f",
  "../../etc/passwd",
  "<script>alert(1)</script>",
  "${7*7}{{7*7}}",
  " ",
  "",
];

/** Numbers at and past what JSON and 64-bit columns hold. */
export const HUGE_NUMBERS = [
  1e308,
  -1e308,
  2 ** 53 + 2,
  -(2 ** 63),
  2 ** 64,
  9.999e20,
  5e-324,
  -0,
  0.5,
  -1,
  2147483648,
];

const WRONG_TYPES: unknown[] = ["text", 42, 1.5, true, false, null, [], {}, ["x"], { a: 1 }];

/** One place in a value: its JSON pointer (for labels), the keys leading to it, and its schema. */
interface Site {
  pointer: string;
  path: (string | number)[];
  schema: Schema;
}

const escape = (key: string | number) => String(key).replace(/~/g, "~0").replace(/\//g, "~1");

/** The schema of a map's values (`alt_text_by_asset_id`), or none. */
const patternSchema = (schema: Schema): Schema => Object.values(schema.patternProperties ?? {})[0] ?? {};

function sitesOf(value: unknown, schema: Schema, path: (string | number)[] = []): Site[] {
  const out: Site[] = [{ pointer: path.map((k) => `/${escape(k)}`).join(""), path, schema }];
  if (Array.isArray(value))
    value.forEach((item, i) => out.push(...sitesOf(item, schema.items ?? {}, [...path, i])));
  else if (value !== null && typeof value === "object")
    for (const [k, v] of Object.entries(value as Record<string, unknown>))
      out.push(...sitesOf(v, schema.properties?.[k] ?? patternSchema(schema), [...path, k]));
  return out;
}

/** What one mutation does, given its site and a noise number. */
type Mutation = (site: Site, noise: number) => { value: unknown; label: string } | null;

const pick = <T>(list: readonly T[], noise: number): T => list[noise % list.length]!;

const MUTATIONS: Record<string, Mutation> = {
  "missing-required": (site, noise) => {
    const required = (site.schema.required ?? []) as string[];
    if (required.length === 0) return null;
    const name = pick(required, noise);
    return { value: { omit: name }, label: `without required ${site.pointer}/${name}` };
  },
  "extra-field": (site, noise) =>
    site.schema.type === "object"
      ? { value: { add: `x_fuzz_${noise % 7}` }, label: `unknown field in ${site.pointer || "/"}` }
      : null,
  "wrong-type": (site, noise) => ({
    value: pick(WRONG_TYPES, noise),
    label: `wrong type at ${site.pointer || "/"}`,
  }),
  "past-max-length": (site) =>
    typeof site.schema.maxLength === "number"
      ? { value: "y".repeat(site.schema.maxLength + 1), label: `maxLength+1 at ${site.pointer}` }
      : null,
  "at-max-length": (site) =>
    typeof site.schema.maxLength === "number"
      ? {
          value: "😀".repeat(Math.ceil(site.schema.maxLength / 2)),
          label: `maxLength in emoji at ${site.pointer}`,
        }
      : null,
  "below-min-length": (site) =>
    typeof site.schema.minLength === "number" && site.schema.minLength > 0
      ? { value: "z".repeat(site.schema.minLength - 1), label: `minLength-1 at ${site.pointer}` }
      : null,
  "past-bounds": (site, noise) => {
    const { minimum, maximum } = site.schema;
    const options = [maximum === undefined ? null : maximum + 1, minimum === undefined ? null : minimum - 1];
    const value = pick(
      options.filter((o) => o !== null),
      noise,
    );
    return value === undefined ? null : { value, label: `out of bounds number at ${site.pointer}` };
  },
  "past-max-items": (site, noise) =>
    typeof site.schema.maxItems === "number" && site.schema.maxItems <= 10_000
      ? {
          value: Array(site.schema.maxItems + 1).fill(pick(["a", 1, {}], noise)),
          label: `maxItems+1 at ${site.pointer}`,
        }
      : null,
  "not-in-enum": (site, noise) =>
    Array.isArray(site.schema.enum) || "const" in site.schema
      ? {
          value: pick(["NOW", "none", "", "draft ", "Bluesky"], noise),
          label: `not in enum at ${site.pointer}`,
        }
      : null,
  unicode: (site, noise) => ({
    value: pick(NASTY_STRINGS, noise),
    label: `odd unicode at ${site.pointer || "/"}`,
  }),
  "huge-number": (site, noise) => ({
    value: pick(HUGE_NUMBERS, noise),
    label: `huge number at ${site.pointer || "/"}`,
  }),
};

/** The names of the mutations, for the generator. */
export const MUTATION_NAMES = Object.keys(MUTATIONS);

/** `value` with one mutation applied at the `at`-th site; the label says which. */
export function mutate(value: unknown, schema: Schema, name: string, at: number, noise: number) {
  const sites = sitesOf(value, schema);
  for (let i = 0; i < sites.length; i++) {
    const site = sites[(at + i) % sites.length]!;
    const change = MUTATIONS[name]!(site, noise);
    if (!change) continue;
    const copy = structuredClone(value);
    return { value: applyAt(copy, site.path, change.value, name), label: `${name}: ${change.label}` };
  }
  return { value, label: `${name}: nowhere to apply, sent valid` };
}

function applyAt(root: unknown, path: (string | number)[], change: unknown, name: string): unknown {
  const walk = (keys: (string | number)[]) =>
    keys.reduce((at: any, k) => at[k], root) as Record<string, unknown>;
  if (name === "missing-required" || name === "extra-field") {
    const target = walk(path);
    const { omit, add } = change as { omit?: string; add?: string };
    if (omit !== undefined) delete target[omit];
    if (add !== undefined) target[add] = "surprise";
    return root;
  }
  if (path.length === 0) return change;
  walk(path.slice(0, -1))[path[path.length - 1]!] = change;
  return root;
}

/** Bodies that are not the JSON the schema wants at all. */
export const RAW_BODIES: { label: string; text: string }[] = [
  { label: "empty body", text: "" },
  { label: "truncated JSON", text: '{"name":' },
  { label: "JSON null", text: "null" },
  { label: "JSON array", text: "[]" },
  { label: "JSON string", text: '"text"' },
  { label: "number past double", text: '{"name":1e400,"when":-1e400}' },
  { label: "400-digit integer", text: `{"version":${"9".repeat(400)}}` },
  { label: "__proto__ key", text: '{"__proto__":{"admin":true},"name":"p"}' },
  { label: "constructor key", text: '{"constructor":{"prototype":{"x":1}}}' },
  { label: "duplicate keys", text: '{"name":"a","name":"b"}' },
  { label: "deep nesting", text: `${"[".repeat(5000)}${"]".repeat(5000)}` },
  { label: "BOM before JSON", text: '\ufeff{"name":"bom"}' },
  { label: "lone surrogate escape", text: '{"name":"\\ud800","email":"\\udfff@x.io"}' },
  { label: "NUL escape", text: '{"name":"a\\u0000b"}' },
  { label: "trailing garbage", text: '{"name":"x"} trailing' },
  { label: "form encoding", text: "name=x&when=now" },
  { label: "body past 1 MiB", text: `{"name":"${"x".repeat(1_100_000)}"}` },
];

/** One boundary variation of a valid body, as an arbitrary of `{body, label}`. */
export function mutatedBody(valid: fc.Arbitrary<unknown>, schema: Schema) {
  return fc
    .tuple(valid, fc.constantFrom(...MUTATION_NAMES), fc.nat(), fc.nat())
    .map(([value, name, at, noise]) => mutate(value, schema, name, at, noise));
}
