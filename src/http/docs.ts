import { t, type TSchema } from "elysia";
import type { RouteScope } from "../core/scopes.ts";
import { createsWork } from "../modules/billing/work.ts";
import { canonicalJson } from "../lib/canonical-json.ts";

/** The problem+json body, as documented in OpenAPI. */
export const ProblemSchema = t.Object(
  {
    type: t.String(),
    title: t.String(),
    status: t.Number({ multipleOf: 1 }),
    detail: t.String(),
    instance: t.String(),
    code: t.String(),
    category: t.Optional(t.String()),
    request_id: t.String(),
    retryable: t.Boolean(),
    retry: t.Optional(
      t.Object({ safety: t.String(), after: t.Union([t.Number({ multipleOf: 1 }), t.Null()]) }),
    ),
    user_action: t.Optional(t.String()),
    errors: t.Array(
      t.Object(
        {
          pointer: t.String(),
          code: t.String(),
          detail: t.String(),
          parameter: t.Optional(t.String()),
        },
        { title: "ProblemError" },
      ),
    ),
  },
  { title: "Problem" },
);

const STATUS_TEXT: Record<number, string> = {
  400: "Invalid request (public_invalid_request)",
  401: "Missing or invalid API key (public_authentication_required)",
  402: "The subscription does not permit it (public_subscription_required) or a usage limit",
  403:
    "The API key lacks the scope (public_scope_missing), is not live, or its account's address is not " +
    "confirmed yet (public_email_unconfirmed)",
  404: "Not found, or a workspace the key cannot use (public_not_found)",
  405: "The path does not support this method (public_method_not_allowed); see Allow",
  409: "Conflict with current state or an earlier request",
  412: "If-Match does not match the current ETag (public_precondition_failed)",
  413: "Body above 1 MiB (public_payload_too_large)",
  415: "Body not sent as application/json (public_unsupported_media_type)",
  422: "Valid request that cannot be published (public_unpublishable)",
  428: "If-Match required (public_precondition_required)",
  429: "Rate limit exceeded (public_rate_limited); see Retry-After",
  431: "URL and headers above 16 KiB (public_request_header_too_large)",
  500: "Internal error (public_internal_error)",
  502: "Stripe or a social network did not answer validly (public_provider_error)",
  503: "Unavailable for now (public_unavailable); see Retry-After",
};

const problemContent = { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } };

/** What a route declares about itself: its scope and the documentation OpenAPI shows. */
export interface OperationSpec {
  scope: RouteScope | null;
  /** The operation's name in generated clients: camelCase, unique (`createPost`, `listWebhookDeliveries`). */
  operationId?: string;
  summary: string;
  tag: string;
  /**
   * Error statuses beyond the ones every authenticated route has (400, 401, 403, 413, 429, 431, 500,
   * 503).
   */
  errors?: number[];
  idempotency?: "required" | "optional";
  ifMatch?: "required" | "optional";
  description?: string;
}

/**
 * Route options for a Herald operation: the `scope` macro plus an OpenAPI `detail` carrying the
 * scope (`x-required-scope`) and what `documentOperation` turns into problem responses and headers.
 */
export function operation(spec: OperationSpec & { scope: RouteScope }): {
  scope: RouteScope;
  detail: Record<string, unknown>;
  query: typeof NoQuery;
};
export function operation(spec: OperationSpec & { scope: null }): {
  detail: Record<string, unknown>;
  query: typeof NoQuery;
};
export function operation(spec: OperationSpec): {
  scope?: RouteScope;
  detail: Record<string, unknown>;
  query: typeof NoQuery;
} {
  const detail: Record<string, unknown> = {
    summary: spec.summary,
    tags: [spec.tag],
    "x-required-scope": spec.scope ?? "none",
    "x-error-statuses": errorStatuses(spec),
    "x-idempotency": spec.idempotency ?? "none",
    "x-if-match": spec.ifMatch ?? "none",
    security: spec.scope === null ? [] : [{ bearer: [] }],
  };
  if (spec.operationId) detail.operationId = spec.operationId;
  if (spec.description) detail.description = spec.description;
  // Routes that take query parameters declare their own `query` after this spread; the rest refuse any.
  return spec.scope === null ? { detail, query: NoQuery } : { scope: spec.scope, detail, query: NoQuery };
}

function errorStatuses(spec: OperationSpec): number[] {
  // 503: any operation meets a full or read-only disk or a database restarting (storage-problem.ts).
  const statuses = new Set<number>([400, 413, 431, 500, 503, ...(spec.errors ?? [])]);
  if (spec.scope !== null) for (const s of [401, 403, 429]) statuses.add(s);
  if (spec.ifMatch === "required") statuses.add(428);
  if (spec.ifMatch) statuses.add(412);
  if (spec.idempotency) statuses.add(409);
  return [...statuses].sort();
}

/**
 * Completes one generated OpenAPI operation: a problem+json response for every error status it
 * declares and its Service-Request-Id, Idempotency-Key and If-Match headers. (Elysia replaces
 * `detail.responses` and `detail.parameters` with what it derives from the schemas, so these are
 * added afterwards.)
 */
export function documentOperation(op: Record<string, any>, method = "", path = ""): void {
  const responses = (op.responses ??= {});
  const authenticated = op["x-required-scope"] !== "none";
  // The rails' billing rule (src/modules/billing/work.ts) refuses these while the account is read-only.
  if (authenticated && method && createsWork(method.toUpperCase(), path))
    (op["x-error-statuses"] as number[] | undefined)?.push(402);
  // A body sent as anything but JSON is refused by the parser before validation.
  if (op.requestBody) (op["x-error-statuses"] as number[] | undefined)?.push(415);
  // The body's example, written by hand with its schema, where tools look for it first.
  const media = op.requestBody?.content?.["application/json"];
  const written = media?.schema?.examples?.[0];
  if (media && written !== undefined && media.example === undefined) media.example = structuredClone(written);
  for (const status of (op["x-error-statuses"] as number[] | undefined) ?? []) {
    responses[String(status)] ??= { description: STATUS_TEXT[status] ?? "Error", content: problemContent };
  }
  const parameters = (op.parameters ??= []);
  parameters.push({
    name: "Service-Request-Id",
    in: "header",
    required: false,
    schema: { type: "string", maxLength: 128 },
    description: "Echoed when valid; generated otherwise.",
  });
  if (op["x-idempotency"] !== "none" && op["x-idempotency"] !== undefined) {
    parameters.push({
      name: "Idempotency-Key",
      in: "header",
      required: op["x-idempotency"] === "required",
      schema: { type: "string", minLength: 1, maxLength: 200 },
      description: "A key of yours: the same key with the same body replays the first answer.",
    });
  }
  if (op["x-if-match"] !== "none" && op["x-if-match"] !== undefined) {
    parameters.push({
      name: "If-Match",
      in: "header",
      required: op["x-if-match"] === "required",
      schema: { type: "string" },
      description: "The resource's current ETag.",
    });
  }
  for (const [status, response] of Object.entries(responses as Record<string, Record<string, any>>)) {
    documentResponseHeaders(Number(status), response, authenticated);
    for (const media of Object.values<{ schema?: unknown }>(response.content ?? {})) asDeclared(media.schema);
  }
  // Query parameters the rails parse themselves: their bounds, which the string schemas cannot carry.
  for (const parameter of parameters as {
    name: string;
    in: string;
    schema?: Record<string, unknown>;
    description?: string;
  }[]) {
    if (parameter.in === "query" && parameter.name === "limit") {
      parameter.schema = { type: "integer", minimum: 1, maximum: 100, default: 25 };
      parameter.description ??= "Items per page.";
    }
    if (parameter.in === "path") parameter.description ??= pathParameterDescription(parameter.name);
    // Elysia leaves a query parameter's description inside its schema, where tools do not show it.
    if (parameter.in === "query")
      parameter.description ??=
        (parameter.schema?.description as string | undefined) ?? QUERY_DESCRIPTIONS[parameter.name];
    if (parameter.in === "query" && parameter.name === "after")
      parameter.description ??= "The next_cursor of the previous page, unchanged.";
  }
  for (const key of ["x-error-statuses", "x-idempotency", "x-if-match"]) delete op[key];
}

/**
 * Undoes what Elysia adds to a response schema: it sets `additionalProperties: false` on a route's
 * response schema object when it first validates an answer of that route, so without this the document
 * would depend on which routes were requested before it was made (and one named schema would have two
 * shapes). No response schema of Herald's declares it. Runs on the document's own copy of the schemas.
 */
function asDeclared(schema: unknown): void {
  if (Array.isArray(schema)) for (const item of schema) asDeclared(item);
  if (!schema || typeof schema !== "object") return;
  const node = schema as Record<string, unknown>;
  if (node.additionalProperties === false) delete node.additionalProperties;
  for (const [key, value] of Object.entries(node)) if (!VALUE_KEYWORDS.has(key)) asDeclared(value);
}

// `required` marks the headers every such response carries (the contract fuzzer checks them).
const header = (
  description: string,
  schema: Record<string, unknown> = { type: "string" },
  required = false,
) => ({ description, required, schema });

// Answers with an `object` that are not a resource one can read back: no ETag.
const NOT_RESOURCES = new Set(["post_validation"]);

/** The response headers the rails add: the request id always; ETag, Link and Retry-After where they apply. */
function documentResponseHeaders(
  status: number,
  response: Record<string, any>,
  authenticated: boolean,
): void {
  const headers: Record<string, unknown> = (response.headers ??= {});
  headers["Service-Request-Id"] = header(
    "The request id (echoed or generated); also `request_id` in problems.",
    { type: "string" },
    true,
  );
  if (status === 202 || status === 429 || status === 503)
    headers["Retry-After"] = header(
      "Seconds to wait before polling or retrying.",
      { type: "integer", minimum: 1 },
      true,
    );
  if (status === 401) headers["WWW-Authenticate"] = header("A Bearer challenge.", { type: "string" }, true);
  if (status < 200 || status >= 300) return;
  if (authenticated)
    headers["Herald-Billing-Warning"] = header(
      "Present while the account's subscription is in `grace` (`grace; read_only_at=<timestamp>`) or " +
        "`read_only` (`read_only`): see docs/billing.md.",
    );
  const properties = response.content?.["application/json"]?.schema?.properties ?? {};
  if ("has_more" in properties && "next_cursor" in properties)
    headers.Link = header('`<…>; rel="next"` when another page exists.');
  // A deletion result (`deleted`) has no current version to match.
  else if (
    "object" in properties &&
    !("posts" in properties) &&
    !("deleted" in properties) &&
    !NOT_RESOURCES.has(properties.object.const)
  )
    headers.ETag = header("The resource's current entity tag, for If-Match.", { type: "string" }, true);
}

/** `workspace_id` → "The workspace's id."; `group` → "The post group's key." */
function pathParameterDescription(name: string): string {
  if (name === "group") return "The post group's key.";
  return `The ${name.replace(/_id$/, "").replace(/_/g, " ")}'s id.`;
}

const QUERY_DESCRIPTIONS: Record<string, string> = {
  view: "Posts of one view: drafts, scheduled, published, attention (failed is its alias) or all.",
  channel: "Only this network's.",
  group: "Only this post group's.",
  destination_id: "Only this destination's.",
  state: "Only posts in this state.",
  created_after: "Only those created after this time (ISO 8601 with a UTC offset).",
  scheduled_before: "Only those scheduled before this time (ISO 8601 with a UTC offset).",
  include: "Adds the optional part it names to each item.",
  status: "Only deliveries with this status.",
  approval: "Only posts whose approval has this status (requested: awaiting approval).",
};

const TAG_DESCRIPTIONS: Record<string, string> = {
  Account: "The account, the calling key and its revocation.",
  Analytics: "Published posts' numbers, per group and over time.",
  Approvals: "Approving posts, requesting changes, comments on posts and review links.",
  Assets: "Images and videos: multipart uploads, listing, deletion.",
  Billing: "The subscription and its checkout, portal and cancellation.",
  "Chat Notifications": "Where a workspace's events are posted in chat.",
  Destinations: "Connected social accounts and connection sessions.",
  Feedback: "Messages to the operators of this installation.",
  Meta: "This document.",
  Posts: "Drafts, scheduling, publishing, the queue and post actions.",
  "Signup and CLI authorization": "Starting an account, and the command line's sign-in.",
  Team: "Members and invitations.",
  Webhooks: "Endpoints, signed deliveries, their log and redelivery.",
  Workspaces: "Workspaces and their settings.",
};

/** The document's `tags`: every tag its operations use, with a description, in alphabetical order. */
export function documentTags(paths: Record<string, unknown>): { name: string; description: string }[] {
  const used = new Set<string>();
  for (const item of Object.values(paths as Record<string, Record<string, { tags?: string[] }>>))
    for (const op of Object.values(item)) for (const tag of op.tags ?? []) used.add(tag);
  return [...used]
    .sort()
    .map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? `${name} operations.` }));
}

/** The query of a route that takes no parameters: an unknown one is a 400 naming it (a typo is caught). */
export const NoQuery = t.Object({}, { additionalProperties: false });

/** A `{data, has_more, next_cursor}` listing schema of `item`, named after it: `Post` → `PostList`. */
export function listingSchema(item: TSchema) {
  if (!item.title) throw new Error("a listing's item schema needs a title (its list is named after it)");
  return t.Object(
    {
      data: t.Array(item),
      has_more: t.Boolean(),
      next_cursor: t.Union([t.String(), t.Null()]),
    },
    { title: `${item.title}List` },
  );
}

// Keywords whose values are data, not schemas: a `title` inside them names nothing.
const VALUE_KEYWORDS = new Set(["example", "examples", "default", "const", "enum"]);

/**
 * Names the document's schemas: every schema with a `title` (given where the route schemas are
 * defined, `{ title: "Post" }`) moves to `schemas` under that title and is left as a `$ref`, innermost
 * first, so a named schema refers to the named schemas inside it. A schema met twice is kept once;
 * two different schemas with one title are an error (a name must mean one shape).
 */
export function nameSchemas(node: unknown, schemas: Record<string, unknown>): unknown {
  if (Array.isArray(node)) return node.map((item) => nameSchemas(item, schemas));
  if (!node || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node))
    out[key] = VALUE_KEYWORDS.has(key) ? value : nameSchemas(value, schemas);
  const title = out.title;
  const isSchema = "type" in out || "anyOf" in out || "oneOf" in out || "allOf" in out;
  if (typeof title !== "string" || !isSchema) return out;
  if (!/^[A-Z][A-Za-z0-9]*$/.test(title)) throw new Error(`schema name "${title}" is not PascalCase`);
  const known = schemas[title];
  if (known === undefined) schemas[title] = out;
  else if (canonicalJson(known) !== canonicalJson(out))
    throw new Error(`two different schemas are named "${title}": give one of them another title`);
  return { $ref: `#/components/schemas/${title}` };
}

/** A date-time string in responses. */
export const Timestamp = t.String({ format: "date-time" });
