import type { FieldError } from "../core/problem.ts";

interface SchemaIssue {
  path: string;
  message: string;
  type?: number;
  schema?: {
    type?: string;
    anyOf?: { type?: string; format?: string; const?: unknown }[];
    format?: string;
    enum?: unknown[];
    required?: string[];
  };
  value?: unknown;
}

// TypeBox ValueErrorType numbers that need a friendlier sentence than the library's.
const ADDITIONAL_PROPERTY = 42;
const REQUIRED_PROPERTY = 45;
const UNION = 62;

function describe(issue: SchemaIssue): string {
  if (issue.type === ADDITIONAL_PROPERTY) return "is not a known property";
  if (issue.type === REQUIRED_PROPERTY) return "is required";
  if (issue.type === UNION) {
    const options = issue.schema?.anyOf ?? [];
    // A union of constants is an enumeration: name the allowed values.
    if (options.length > 0 && options.every((o) => o.const !== undefined))
      return `must be one of ${options.map((o) => JSON.stringify(o.const)).join(", ")}`;
    const types = [...new Set(options.map((o) => o.format ?? o.type).filter(Boolean))];
    if (types.length > 0)
      return `must be ${types.map((t) => (t === "integer" ? "an integer" : `a ${t}`)).join(" or ")}`;
    return "does not match any allowed form";
  }
  for (const [pattern, sentence] of MESSAGES) {
    const match = pattern.exec(issue.message);
    if (match) return sentence(match);
  }
  return issue.message.replace(/^Expected /, "must be ");
}

const article = (type: string) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);

// TypeBox's English, rewritten as "<pointer> must …" sentences.
const MESSAGES: [RegExp, (m: RegExpExecArray) => string][] = [
  [/^Expected string length greater or equal to (\d+)$/, (m) => `must be at least ${m[1]} characters`],
  [/^Expected string length less or equal to (\d+)$/, (m) => `must be at most ${m[1]} characters`],
  [/^Expected array length (?:to be )?greater or equal to (\d+)$/, (m) => `must have at least ${m[1]} items`],
  [/^Expected array length (?:to be )?less or equal to (\d+)$/, (m) => `must have at most ${m[1]} items`],
  [/^Expected array to contain unique items$/, () => "must not repeat an item"],
  [/^Expected (?:integer|number) to be greater or equal to (\S+)$/, (m) => `must be at least ${m[1]}`],
  [/^Expected (?:integer|number) to be less or equal to (\S+)$/, (m) => `must be at most ${m[1]}`],
  [/^Expected string to match 'email' format$/, () => "must be an e-mail address"],
  [/^Expected string to match '([\w-]+)' format$/, (m) => `must be in ${m[1]} format`],
  [/^Expected string to match '(.+)'$/, (m) => `must match the pattern ${m[1]}`],
  [
    /^Expected object to have at least (\d+) properties$/,
    (m) => `must have at least ${m[1]} propert${m[1] === "1" ? "y" : "ies"}`,
  ],
  [/^Expected (string|integer|number|boolean|object|array|null)$/, (m) => `must be ${article(m[1]!)}`],
  [/^Expected required property$/, () => "is required"],
];

/**
 * Turns the schema issues of an Elysia validation error into one contract field error per
 * offending location. `location` is "body", "query", "params" or "headers".
 */
export function fieldErrorsFromSchemaIssues(issues: SchemaIssue[], location: string): FieldError[] {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const issue of issues) {
    const pointer = issue.path ?? "";
    // An absent body where an object is required: name each required property, as `{}` would.
    if (
      location === "body" &&
      pointer === "" &&
      issue.value === undefined &&
      issue.schema?.required?.length
    ) {
      for (const name of issue.schema.required) {
        if (seen.has(`/${name}`)) continue;
        seen.add(`/${name}`);
        out.push({ pointer: `/${name}`, code: "custom", detail: "is required" });
      }
      continue;
    }
    if (seen.has(pointer)) continue;
    seen.add(pointer);
    const entry: FieldError = { pointer, code: "custom", detail: describe(issue) };
    if (location !== "body") entry.parameter = pointer.replace(/^\//, "");
    out.push(entry);
  }
  return out;
}
