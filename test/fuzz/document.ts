// Herald's own OpenAPI document as the fuzzer reads it: its operations, their schemas with local
// `$ref`s inlined, and JSON Schema validators (Ajv, draft 2020-12 as OpenAPI 3.1 uses) of responses.
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const METHODS = ["get", "put", "post", "patch", "delete"];

/** A JSON Schema as the document writes it. */
export type Schema = Record<string, any>;

/** A parameter of an operation (path, query or header). */
export interface Parameter {
  name: string;
  in: "path" | "query" | "header";
  required: boolean;
  schema: Schema;
}

/** A documented response: its body schema (null for none), its headers (lower case), the required ones. */
export interface DocumentedResponse {
  schema: Schema | null;
  headers: string[];
  required: string[];
}

/** One operation of the document, ready for the generator and the checks. */
export interface Operation {
  method: string;
  /** The documented path, relative to the /v1 server: `/workspaces/{workspace_id}`. */
  path: string;
  /** `POST /workspaces/{workspace_id}/posts`, the name failures and HERALD_FUZZ_ONLY use. */
  name: string;
  scope: string;
  parameters: Parameter[];
  /** The JSON request body's schema, or null when the operation takes none. */
  body: Schema | null;
  bodyRequired: boolean;
  /** Every documented status with its JSON schema (null for none) and its documented headers. */
  responses: Map<number, DocumentedResponse>;
}

/** Follows local `$ref`s and inlines them (the document has no recursive schema). */
export function inline(doc: Schema, node: unknown): any {
  if (Array.isArray(node)) return node.map((item) => inline(doc, item));
  if (node === null || typeof node !== "object") return node;
  const ref = (node as Schema).$ref;
  if (typeof ref === "string" && ref.startsWith("#/")) {
    const target = ref
      .slice(2)
      .split("/")
      .reduce((at: any, part) => at?.[part.replace(/~1/g, "/").replace(/~0/g, "~")], doc);
    return inline(doc, target);
  }
  const out: Schema = {};
  for (const [key, value] of Object.entries(node)) out[key] = inline(doc, value);
  return out;
}

/** Every operation of the document, in document order. */
export function operationsOf(doc: Schema): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Schema>)) {
    for (const [method, raw] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue;
      const op = inline(doc, raw);
      const responses = new Map<number, DocumentedResponse>();
      for (const [status, response] of Object.entries(op.responses ?? {}) as [string, Schema][]) {
        const content = response.content ?? {};
        const schema = content["application/json"]?.schema ?? content["application/problem+json"]?.schema;
        const headers = Object.entries((response.headers ?? {}) as Record<string, Schema>);
        responses.set(Number(status), {
          schema: schema ?? null,
          headers: headers.map(([name]) => name.toLowerCase()),
          required: headers.filter(([, h]) => h.required === true).map(([name]) => name.toLowerCase()),
        });
      }
      out.push({
        method: method.toUpperCase(),
        path,
        name: `${method.toUpperCase()} ${path}`,
        scope: op["x-required-scope"] ?? "none",
        parameters: (op.parameters ?? []).map((p: Schema) => ({
          name: p.name,
          in: p.in,
          required: p.required === true,
          schema: p.schema ?? { type: "string" },
        })),
        body: op.requestBody?.content?.["application/json"]?.schema ?? null,
        bodyRequired: op.requestBody?.required === true,
        responses,
      });
    }
  }
  return out;
}

/** Compiles and caches one validator per response schema. */
export class ResponseValidator {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  private readonly cache = new Map<Schema, ValidateFunction>();

  constructor() {
    addFormats(this.ajv);
    // Elysia's `t.Integer` documents a string branch with this format (it coerces numeric strings).
    this.ajv.addFormat("integer", /^-?\d+$/);
  }

  /** Null when `body` is valid against `schema`, else Ajv's errors in one line each. */
  errors(schema: Schema, body: unknown): string[] | null {
    let validate = this.cache.get(schema);
    if (!validate) {
      validate = this.ajv.compile(schema);
      this.cache.set(schema, validate);
    }
    if (validate(body)) return null;
    return (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || "/"} ${e.message}`);
  }
}
