// Valid values of a JSON Schema as fast-check arbitraries: the generator of request bodies and query
// values. `hints` give known fields values that reach past the first check (real ids, "now", a fake's
// origin) next to what the schema alone produces.
import fc from "fast-check";
import type { Schema } from "./document.ts";

/**
 * Values for a field by its name; `only` drops the schema's own values and `present` always sends the
 * field (fields Herald would dial, or fall back to a public default for).
 */
export type Hints = Record<string, { arbitrary: fc.Arbitrary<unknown>; only?: boolean; present?: boolean }>;

// Arrays and free strings stay short: the boundary mutations reach the limits on purpose.
const SPAN = 4;
const STRING_SPAN = 24;

/** Strings: mostly printable ASCII, sometimes any Unicode grapheme (emoji, RTL, combining marks). */
function text(min: number, max: number): fc.Arbitrary<string> {
  const maxLength = Math.min(max, min + STRING_SPAN);
  return fc.oneof(
    { weight: 3, arbitrary: fc.string({ minLength: min, maxLength }) },
    { weight: 1, arbitrary: fc.string({ unit: "grapheme", minLength: min, maxLength }) },
  );
}

/** A string of the schema's `format`, or null for formats without a generator here. */
function formatted(format: string): fc.Arbitrary<string> | null {
  if (format === "date-time")
    return fc
      .integer({ min: Date.parse("2025-01-01T00:00:00Z"), max: Date.parse("2027-12-31T00:00:00Z") })
      .map((ms) => new Date(ms).toISOString());
  if (format === "email") return fc.emailAddress().filter((e) => e.length <= 254);
  // Never a host that resolves: requests must stay on this machine.
  if (format === "uri") return fc.constantFrom("https://example.invalid/a", "https://h.invalid/");
  return null;
}

function stringOf(schema: Schema): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0;
  const max = schema.maxLength ?? Math.max(min, 64);
  const fits = (s: string) => s.length >= min && s.length <= max;
  const byFormat = schema.format ? formatted(schema.format) : null;
  if (byFormat) return byFormat.filter(fits);
  if (schema.pattern) {
    const matching = fc.stringMatching(new RegExp(schema.pattern), { size: "small" });
    // Patterns that only constrain a part (`\S`) are padded into the length bounds by the filter.
    return matching.filter(fits);
  }
  // Exactly at the limits now and then: the boundary the limit is about.
  return fc.oneof(
    { weight: 8, arbitrary: text(min, max) },
    { weight: 1, arbitrary: fc.constant("x".repeat(min || 1)).filter(fits) },
    { weight: 1, arbitrary: fc.constant("é".repeat(Math.min(max, 100_000))) },
  );
}

function numberOf(schema: Schema, integer: boolean): fc.Arbitrary<number> {
  const min = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : -1e6);
  const max = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : 1e9);
  const inRange = integer ? fc.integer({ min, max }) : fc.double({ min, max, noNaN: true });
  return fc.oneof({ weight: 4, arbitrary: inRange }, { weight: 1, arbitrary: fc.constantFrom(min, max) });
}

function arrayOf(schema: Schema, hints: Hints, name: string | null): fc.Arbitrary<unknown[]> {
  const minLength = schema.minItems ?? 0;
  const maxLength = Math.min(schema.maxItems ?? minLength + SPAN, minLength + SPAN);
  // Array items take the hint of their array (`media` → asset ids).
  return fc.array(valueOf(schema.items ?? {}, hints, name), { minLength, maxLength });
}

function objectOf(schema: Schema, hints: Hints): fc.Arbitrary<Record<string, unknown>> {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [key, property] of Object.entries(properties)) model[key] = valueOf(property, hints, key);
  const present = Object.keys(properties).filter((key) => hints[key]?.present);
  const required = [...new Set([...((schema.required ?? []) as string[]), ...present])];
  // Optional fields one time in three: each one sent is one more rule a request must pass.
  const fields = Object.entries(model).map(([key, arbitrary]) =>
    required.includes(key)
      ? arbitrary.map((v) => [key, v] as const)
      : fc.oneof(
          { weight: 2, arbitrary: fc.constant(null) },
          { weight: 1, arbitrary: arbitrary.map((v) => [key, v] as const) },
        ),
  );
  let out: fc.Arbitrary<Record<string, unknown>> = fc
    .tuple(...fields)
    .map((pairs) => Object.fromEntries(pairs.filter((p) => p !== null)));
  const patterns = Object.values((schema.patternProperties ?? {}) as Record<string, Schema>);
  if (patterns.length > 0 && Object.keys(properties).length === 0)
    out = fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), valueOf(patterns[0]!, hints, null), {
      maxKeys: 3,
    });
  const atLeast = schema.minProperties ?? 0;
  return atLeast > 0 ? out.filter((o) => Object.keys(o).length >= atLeast) : out;
}

/** A valid value of `schema`; `name` is the property (or parameter) it fills, for the hints. */
export function valueOf(schema: Schema, hints: Hints, name: string | null = null): fc.Arbitrary<unknown> {
  const plain = fromSchema(schema, hints, name);
  // An array's hint is for its items (`media` → asset ids), which `arrayOf` passes the name to.
  const hint = name === null || schema.type === "array" ? undefined : hints[name];
  if (!hint) return plain;
  if (hint.only) return hint.arbitrary;
  return fc.oneof({ weight: 3, arbitrary: hint.arbitrary }, { weight: 1, arbitrary: plain });
}

function fromSchema(schema: Schema, hints: Hints, name: string | null): fc.Arbitrary<unknown> {
  if ("const" in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const alternatives = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (alternatives) return fc.oneof(...alternatives.map((s) => fromSchema(s, hints, name)));
  if (Array.isArray(schema.type))
    return fc.oneof(...(schema.type as string[]).map((type) => fromSchema({ ...schema, type }, hints, name)));
  switch (schema.type) {
    case "string":
      return stringOf(schema);
    case "integer":
      return numberOf(schema, true);
    case "number":
      return numberOf(schema, schema.multipleOf === 1);
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array":
      return arrayOf(schema, hints, name);
    case "object":
      return objectOf(schema, hints);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}
