import { Type, type TSchema } from "@sinclair/typebox";

// A network's `optionsSchema` is also how people see its options: `title` names a field, `description`
// helps with it (on the whole schema: a note for the network), a literal's `title` names a choice,
// `default: false` marks a switch that is off unless turned on, and `examples` on a list's items are
// the values to pick from. The dashboard's compose form is built from these. The API's request schema
// and the OpenAPI document take the schema without them: they describe validation only, and a default
// there would be filled into requests.

/** Keywords that only present an option. */
const PRESENTATION = new Set(["title", "description", "default", "examples"]);

/** Keywords whose value maps names to schemas (a property may itself be called `title`). */
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "$defs", "definitions"]);

/** A copy of a schema without its presentation keywords, TypeBox's symbols kept. */
export function validationSchema<T extends TSchema>(schema: T): T {
  return strip(schema, false) as T;
}

function strip(node: unknown, isMap: boolean): unknown {
  if (Array.isArray(node)) return node.map((value) => strip(value, false));
  if (node === null || typeof node !== "object") return node;
  const copy: Record<string | symbol, unknown> = {};
  for (const symbol of Object.getOwnPropertySymbols(node))
    copy[symbol] = (node as Record<symbol, unknown>)[symbol];
  for (const [key, value] of Object.entries(node)) {
    if (!isMap && PRESENTATION.has(key)) continue;
    copy[key] = strip(value, !isMap && SCHEMA_MAPS.has(key));
  }
  return copy;
}

/**
 * `destination_options.<channel>.first_comment` of the networks that publish one: a comment the
 * engine posts under the post right after it is published. Its length and the network's other rules
 * are the network's `checkFirstComment` (a 422 with a pointer), not the schema's (a 400).
 */
export function firstCommentOption(rules: string) {
  return Type.Optional(
    Type.String({
      minLength: 1,
      title: "First comment",
      description: `Posted as a comment under the post right after it is published. ${rules}`,
    }),
  );
}

/** A first comment's length in code points over `max`: the detail, or nothing. */
export function commentLengthProblems(text: string, max: number, network: string): string[] {
  const length = [...text].length;
  return length > max
    ? [`first comment is ${length} characters; ${network} takes comments of at most ${max}`]
    : [];
}
