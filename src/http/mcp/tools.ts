// The MCP tools: one definition per tool, each a thin call of one API operation (or, for
// upload_media, the API's small upload flow). The definitions know nothing of the transport: `/mcp`
// runs their requests in-process through the app, `herald mcp` over HTTP (an `ApiClient` each).
import type { TSchema } from "@sinclair/typebox";
import { invalid, ProblemError } from "../../core/problem.ts";
import type { RouteScope } from "../../core/scopes.ts";
import { crc64nvmeOf, crc64nvmeToBase64 } from "../../lib/crc64nvme.ts";
import { partSizeFor } from "../../modules/assets/parts.ts";
import { IDEMPOTENCY_KEY_MAX } from "../../modules/idempotency/service.ts";
import {
  CancelPostBody,
  CreatePostsBody,
  GetPostQuery,
  ListPostsQuery,
  PatchDraftBody,
  RetryPostBody,
} from "../routes/posts-schemas.ts";

/** One request of the API under `/v1`, as a tool makes it. */
export interface ApiRequest {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  /** The path under `/v1`, ids already encoded. */
  path: string;
  query?: Record<string, string>;
  body?: unknown;
  idempotencyKey?: string;
  ifMatch?: string;
}

/** What the API answered: the status and the parsed JSON body (null when there was none). */
export interface ApiAnswer {
  status: number;
  headers: Headers;
  body: unknown;
}

/** How a tool reaches the API: the caller's credential is the client's business, never the tool's. */
export interface ApiClient {
  send(request: ApiRequest): Promise<ApiAnswer>;
  /** PUTs bytes to an upload URL the API handed out (a part of an asset upload). */
  upload(url: string, headers: Record<string, string>, bytes: Uint8Array): Promise<ApiAnswer>;
  /** A problem found before any request (a missing id, data too large) in the API's problem shape. */
  problem(problem: ProblemError): Promise<ApiAnswer>;
}

/** The MCP tool annotations (hints for the assistant; the scopes decide what may be done). */
export interface ToolHints {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** A plain JSON Schema object (what `tools/list` advertises). */
export type JsonSchema = Record<string, unknown>;

/** One tool: what it is called, who may see it, what it takes, and the API call it makes. */
export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  /** The scope of its API operation (`x-required-scope`); `authenticated`: any valid credential. */
  scope: RouteScope;
  /** Hidden from test-environment credentials (the API refuses them the operation). */
  liveOnly: boolean;
  annotations: ToolHints;
  inputSchema: JsonSchema;
  run(args: Record<string, unknown>, api: ApiClient): Promise<ApiAnswer>;
}

/** What a caller is allowed: its scopes and environment (the key's, or the stored login's). */
export interface ToolCaller {
  scopes: readonly string[];
  environment: "live" | "test";
}

/** The tools a caller sees and may call: its scopes allow them and, for live-only ones, it is live. */
export function toolsFor(caller: ToolCaller): ToolDefinition[] {
  return TOOLS.filter(
    (tool) =>
      (tool.scope === "authenticated" || caller.scopes.includes(tool.scope)) &&
      (!tool.liveOnly || caller.environment === "live"),
  );
}

/** A TypeBox schema as plain JSON Schema (TypeBox keeps its own markers under symbols, dropped here). */
function plain(schema: TSchema): JsonSchema {
  return JSON.parse(JSON.stringify(schema)) as JsonSchema;
}

/** A closed object schema from properties and the names that are required. */
function objectSchema(properties: Record<string, unknown>, required: string[]): JsonSchema {
  return { type: "object", properties, required, additionalProperties: false };
}

/** The properties and required names of a route schema, to merge into a tool's arguments. */
function fieldsOf(schema: TSchema, without: string[] = []): { properties: JsonSchema; required: string[] } {
  const json = plain(schema);
  const properties = { ...(json.properties as JsonSchema) };
  for (const name of without) delete properties[name];
  const required = ((json.required as string[] | undefined) ?? []).filter((n) => !without.includes(n));
  return { properties, required };
}

const id = (description: string) => ({ type: "string", minLength: 1, description });
const WORKSPACE_ID = id("The workspace (ws_…), from list_workspaces.");
const POST_ID = id("The post (post_…).");
const IDEMPOTENCY_KEY = {
  type: "string",
  minLength: 1,
  maxLength: IDEMPOTENCY_KEY_MAX,
  description: "Sent as Idempotency-Key: the same key and arguments are done once, and answered the same.",
};
const LIMIT = { type: "integer", minimum: 1, maximum: 100, description: "Page size (default 25)." };
const AFTER = { type: "string", description: "The next_cursor of the previous page." };

/** A string argument the path needs; a problem pointing at it when it is missing. */
function pathArg(args: Record<string, unknown>, name: string): string {
  const value = args[name];
  if (typeof value !== "string" || value === "") throw invalid(`/${name}`, "is required: a non-empty string");
  return encodeURIComponent(value);
}

/** The arguments but the named ones (what goes into the request body). */
function without(args: Record<string, unknown>, names: string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).filter(([name]) => !names.includes(name)));
}

/**
 * The query of a read: every argument but the path's (numbers and booleans as text), so the API
 * checks them all, an unknown one included, as it checks a program's query.
 */
function queryOf(args: Record<string, unknown>, pathNames: string[]): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [name, value] of Object.entries(without(args, pathNames)))
    if (value !== undefined && value !== null)
      query[name] = typeof value === "object" ? JSON.stringify(value) : String(value);
  return query;
}

/** An optional Idempotency-Key argument, checked as the API checks the header. */
function idempotencyKeyOf(args: Record<string, unknown>, required = false): string | undefined {
  const key = args.idempotency_key;
  if (key === undefined && !required) return undefined;
  if (typeof key !== "string" || key.length < 1 || key.length > IDEMPOTENCY_KEY_MAX)
    throw invalid("/idempotency_key", "is required: 1 to 200 characters (the request's Idempotency-Key)");
  return key;
}

const readOnly: ToolHints = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

const createBody = fieldsOf(CreatePostsBody);
const draftBody = fieldsOf(CreatePostsBody, ["when", "confirmed"]);
const patchBody = fieldsOf(PatchDraftBody);
const postQuery = (names: string[]) => fieldsOf(ListPostsQuery, names).properties;

/** Every tool, in the order `tools/list` gives them (names and arguments: DESIGN.md, "Agents and programs"). */
export const TOOLS: readonly ToolDefinition[] = [
  {
    name: "list_workspaces",
    title: "List workspaces",
    description:
      "The workspaces this credential can use (GET /v1/workspaces). Start here: every other tool takes a workspace_id.",
    scope: "authenticated",
    liveOnly: false,
    annotations: readOnly,
    inputSchema: objectSchema({ limit: LIMIT, after: AFTER }, []),
    run: (args, api) => api.send({ method: "GET", path: "/workspaces", query: queryOf(args, []) }),
  },
  {
    name: "list_destinations",
    title: "List destinations",
    description:
      "The workspace's connected social accounts (GET /v1/workspaces/{workspace_id}/destinations): " +
      "their ids go into a post's destination_id.",
    scope: "destinations:read",
    liveOnly: false,
    annotations: readOnly,
    // The listing is whole (its limit and after are accepted and ignored), so the tool takes neither.
    inputSchema: objectSchema({ workspace_id: WORKSPACE_ID }, ["workspace_id"]),
    run: (args, api) =>
      api.send({
        method: "GET",
        path: `/workspaces/${pathArg(args, "workspace_id")}/destinations`,
        query: queryOf(args, ["workspace_id"]),
      }),
  },
  {
    name: "list_posts",
    title: "List posts",
    description:
      "One page of the workspace's posts, newest first (GET /v1/workspaces/{workspace_id}/posts), " +
      "filtered by view, channel, group, destination or state.",
    scope: "posts:read",
    liveOnly: false,
    annotations: readOnly,
    inputSchema: objectSchema(
      { workspace_id: WORKSPACE_ID, ...postQuery(["limit", "after"]), limit: LIMIT, after: AFTER },
      ["workspace_id"],
    ),
    run: (args, api) =>
      api.send({
        method: "GET",
        path: `/workspaces/${pathArg(args, "workspace_id")}/posts`,
        query: queryOf(args, ["workspace_id"]),
      }),
  },
  {
    name: "get_post",
    title: "Get a post",
    description:
      "One post with its state, receipts (the published URLs) and, with include: attempts, its " +
      "publishing attempts (GET /v1/workspaces/{workspace_id}/posts/{post_id}).",
    scope: "posts:read",
    liveOnly: false,
    annotations: readOnly,
    inputSchema: objectSchema(
      { workspace_id: WORKSPACE_ID, post_id: POST_ID, ...fieldsOf(GetPostQuery).properties },
      ["workspace_id", "post_id"],
    ),
    run: (args, api) =>
      api.send({
        method: "GET",
        path: `/workspaces/${pathArg(args, "workspace_id")}/posts/${pathArg(args, "post_id")}`,
        query: queryOf(args, ["workspace_id", "post_id"]),
      }),
  },
  {
    name: "validate_post",
    title: "Validate a post",
    description:
      "Checks a Create Post body against every rule (lengths, media, destinations, time) without " +
      "storing anything (POST /v1/workspaces/{workspace_id}/posts/validate). Answers valid, errors and " +
      "warnings with pointers.",
    scope: "posts:read",
    liveOnly: false,
    annotations: readOnly,
    inputSchema: objectSchema({ workspace_id: WORKSPACE_ID, ...createBody.properties }, [
      "workspace_id",
      ...createBody.required,
    ]),
    run: (args, api) =>
      api.send({
        method: "POST",
        path: `/workspaces/${pathArg(args, "workspace_id")}/posts/validate`,
        body: without(args, ["workspace_id"]),
      }),
  },
  {
    name: "create_draft",
    title: "Create a draft",
    description:
      "Stores posts as drafts (Create Post with when: draft): nothing is published. Drafts can be " +
      "edited with update_draft and published from the dashboard or the API.",
    scope: "posts:write",
    liveOnly: false,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    inputSchema: objectSchema(
      { workspace_id: WORKSPACE_ID, ...draftBody.properties, idempotency_key: IDEMPOTENCY_KEY },
      ["workspace_id", ...draftBody.required],
    ),
    run: (args, api) => {
      if (args.when !== undefined || args.confirmed !== undefined)
        throw invalid(
          args.when !== undefined ? "/when" : "/confirmed",
          "is not an argument of create_draft, which only stores drafts; publish_post publishes or schedules",
        );
      return api.send({
        method: "POST",
        path: `/workspaces/${pathArg(args, "workspace_id")}/posts`,
        body: { ...without(args, ["workspace_id", "idempotency_key"]), when: "draft" },
        idempotencyKey: idempotencyKeyOf(args),
      });
    },
  },
  {
    name: "update_draft",
    title: "Update a draft",
    description:
      "Replaces a draft's body or assets (PATCH /v1/workspaces/{workspace_id}/posts/{post_id}). " +
      "version is the post's current version (from get_post): a draft changed since is refused, not " +
      "overwritten.",
    scope: "posts:write",
    liveOnly: false,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    inputSchema: objectSchema(
      {
        workspace_id: WORKSPACE_ID,
        post_id: POST_ID,
        version: {
          type: "integer",
          minimum: 1,
          description: "The draft's version as last read (sent as If-Match).",
        },
        ...patchBody.properties,
      },
      ["workspace_id", "post_id", "version"],
    ),
    run: (args, api) => {
      const workspace = pathArg(args, "workspace_id");
      const post = pathArg(args, "post_id");
      const version = args.version;
      return api.send({
        method: "PATCH",
        path: `/workspaces/${workspace}/posts/${post}`,
        body: without(args, ["workspace_id", "post_id", "version"]),
        // The post's ETag (modules/posts/present.ts, postEtag): `"<id>.v<version>"`.
        ifMatch: Number.isInteger(version) ? `"${args.post_id}.v${version}"` : undefined,
      });
    },
  },
  {
    name: "publish_post",
    title: "Publish or schedule posts",
    description:
      'Publishes posts now, at a time, or in the queue (Create Post with when: "now", "queue" or an ' +
      "ISO 8601 time). Goes out to the social networks: ask the person first, then send confirmed: " +
      "true. The same idempotency_key with the same arguments publishes once.",
    scope: "posts:write",
    liveOnly: true,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    inputSchema: objectSchema(
      {
        workspace_id: WORKSPACE_ID,
        ...createBody.properties,
        when: {
          ...(createBody.properties.when as JsonSchema),
          description:
            '"now", "queue" or an ISO 8601 time with a UTC offset (never "draft": see create_draft)',
        },
        confirmed: {
          type: "boolean",
          const: true,
          description: "Must be true: the person agreed to publish.",
        },
        idempotency_key: IDEMPOTENCY_KEY,
      },
      ["workspace_id", ...createBody.required, "confirmed", "idempotency_key"],
    ),
    run: (args, api) => {
      if (args.when === "draft")
        throw invalid(
          "/when",
          'must not be "draft" here: publish_post publishes or schedules (create_draft stores drafts)',
        );
      const idempotencyKey = idempotencyKeyOf(args, true);
      return api.send({
        method: "POST",
        path: `/workspaces/${pathArg(args, "workspace_id")}/posts`,
        body: without(args, ["workspace_id", "idempotency_key"]),
        idempotencyKey,
      });
    },
  },
  {
    name: "cancel_post",
    title: "Cancel a post",
    description:
      "Cancels a post that has not gone out (POST " +
      "/v1/workspaces/{workspace_id}/posts/{post_id}/cancel): it will not be published.",
    scope: "posts:write",
    liveOnly: false,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    inputSchema: objectSchema(
      {
        workspace_id: WORKSPACE_ID,
        post_id: POST_ID,
        ...fieldsOf(CancelPostBody).properties,
        idempotency_key: IDEMPOTENCY_KEY,
      },
      ["workspace_id", "post_id"],
    ),
    run: (args, api) => onePostVerb(args, api, "cancel"),
  },
  {
    name: "retry_post",
    title: "Retry a post",
    description:
      "Sends a failed, missed or needs-attention post again (POST " +
      "/v1/workspaces/{workspace_id}/posts/{post_id}/retry). When its last outcome is unknown " +
      "(retry_safety unsafe) it may make a duplicate: check the network and send " +
      "acknowledge_duplicate_risk: true.",
    scope: "posts:write",
    liveOnly: true,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    inputSchema: objectSchema(
      {
        workspace_id: WORKSPACE_ID,
        post_id: POST_ID,
        ...fieldsOf(RetryPostBody).properties,
        idempotency_key: IDEMPOTENCY_KEY,
      },
      ["workspace_id", "post_id"],
    ),
    run: (args, api) => onePostVerb(args, api, "retry"),
  },
  {
    name: "upload_media",
    title: "Upload media",
    description:
      "Uploads an image or a short video (at most 1 MiB) as an asset of the workspace (the API's " +
      "upload: start, send the part, complete). Its id goes into a post's media.",
    scope: "assets:write",
    liveOnly: false,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    inputSchema: objectSchema(
      {
        workspace_id: WORKSPACE_ID,
        file_name: { type: "string", minLength: 1, maxLength: 500, examples: ["launch.png"] },
        content_type: { type: "string", minLength: 1, maxLength: 200, examples: ["image/png"] },
        data_base64: {
          type: "string",
          minLength: 1,
          description: "The file's bytes in base64, at most 1 MiB decoded.",
        },
        kind: {
          type: "string",
          enum: ["card", "video", "poster"],
          description: "The asset kind (default: video for video/* types, card otherwise).",
        },
      },
      ["workspace_id", "file_name", "content_type", "data_base64"],
    ),
    run: uploadMedia,
  },
  {
    name: "get_post_group_analytics",
    title: "Get a post group's analytics",
    description:
      "A published post group's numbers: totals with their coverage and one row per post (GET " +
      "/v1/workspaces/{workspace_id}/analytics/post-groups/{group}).",
    scope: "posts:read",
    liveOnly: false,
    annotations: readOnly,
    inputSchema: objectSchema(
      {
        workspace_id: WORKSPACE_ID,
        group: { type: "string", minLength: 1, description: "The post group (a post's group)." },
      },
      ["workspace_id", "group"],
    ),
    run: (args, api) =>
      api.send({
        method: "GET",
        path: `/workspaces/${pathArg(args, "workspace_id")}/analytics/post-groups/${pathArg(args, "group")}`,
        query: queryOf(args, ["workspace_id", "group"]),
      }),
  },
];

/** cancel or retry: the post's verb with the rest of the arguments as its body. */
function onePostVerb(args: Record<string, unknown>, api: ApiClient, verb: "cancel" | "retry") {
  return api.send({
    method: "POST",
    path: `/workspaces/${pathArg(args, "workspace_id")}/posts/${pathArg(args, "post_id")}/${verb}`,
    body: without(args, ["workspace_id", "post_id", "idempotency_key"]),
    idempotencyKey: idempotencyKeyOf(args),
  });
}

/** The largest file upload_media takes (decoded). */
export const MAX_UPLOAD_BYTES = 1_048_576;

/** The bytes of `data_base64`; a problem pointing at it when it is not base64, empty or too large. */
function decodeData(value: unknown): Uint8Array {
  if (typeof value !== "string" || value === "")
    throw invalid("/data_base64", "is required: the file's bytes in base64");
  const compact = value.replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 === 1)
    throw invalid("/data_base64", "must be base64 (A–Z, a–z, 0–9, +, / and = padding)");
  if (Math.floor((compact.length * 3) / 4) > MAX_UPLOAD_BYTES + 2) throw tooLarge();
  const bytes = new Uint8Array(Buffer.from(compact, "base64"));
  if (bytes.byteLength > MAX_UPLOAD_BYTES) throw tooLarge();
  if (bytes.byteLength === 0) throw invalid("/data_base64", "must hold at least one byte");
  return bytes;
}

function tooLarge(): ProblemError {
  return new ProblemError(
    "public_payload_too_large",
    `upload_media takes files up to ${MAX_UPLOAD_BYTES} bytes; upload larger ones with the API or herald assets upload.`,
    {
      errors: [
        {
          pointer: "/data_base64",
          code: "custom",
          detail: `must decode to at most ${MAX_UPLOAD_BYTES} bytes`,
        },
      ],
    },
  );
}

/**
 * upload_media: the API's multipart upload with one part (1 MiB is far below a part's size): start it
 * (with the part's CRC64NVME), PUT the part to the URL it names, complete it; answers the asset. Each
 * write has its own Idempotency-Key, so a step the client sends again is not done twice.
 */
async function uploadMedia(args: Record<string, unknown>, api: ApiClient): Promise<ApiAnswer> {
  const workspace = pathArg(args, "workspace_id");
  const bytes = decodeData(args.data_base64);
  const contentType = typeof args.content_type === "string" ? args.content_type : "";
  const kind = args.kind ?? (contentType.startsWith("video/") ? "video" : "card");
  const checksum = crc64nvmeToBase64(await crc64nvmeOf(bytes));
  const started = await api.send({
    method: "POST",
    path: `/workspaces/${workspace}/asset-uploads`,
    body: {
      kind,
      file_name: args.file_name,
      content_type: args.content_type,
      byte_size: bytes.byteLength,
      part_size: partSizeFor(bytes.byteLength),
      parts: [{ part_number: 1, checksum_crc64nvme: checksum }],
    },
    idempotencyKey: crypto.randomUUID(),
  });
  if (started.status >= 400) return started;
  const upload = started.body as {
    id: string;
    parts: { part_number: number; upload_url: string; required_headers: Record<string, string> }[];
  };
  const part = upload.parts[0]!;
  const sent = await api.upload(part.upload_url, part.required_headers, bytes);
  const etag = sent.headers.get("etag");
  if (sent.status >= 400 || !etag) return sent;
  return api.send({
    method: "POST",
    path: `/workspaces/${workspace}/asset-uploads/${encodeURIComponent(upload.id)}/complete`,
    body: {
      byte_size: bytes.byteLength,
      checksum_crc64nvme: checksum,
      parts: [{ part_number: 1, etag, checksum_crc64nvme: checksum }],
    },
    idempotencyKey: crypto.randomUUID(),
  });
}
