import createClient, { type Client, type Middleware } from "openapi-fetch";
import { IDEMPOTENT_OPERATIONS } from "./operations.ts";
import { type RetryOptions, retryingFetch } from "./retry.ts";
import type { paths } from "./schema.ts";

/** The client createHeraldClient returns: openapi-fetch's, typed by Herald's OpenAPI document. */
export type HeraldClient = Client<paths>;

/** What createHeraldClient takes. */
export interface HeraldClientOptions {
  /** Your Herald's origin, e.g. `https://herald.example.com` (the client adds `/v1`). */
  baseUrl: string;
  /** An API key (`hk_live_…` or `hk_test_…`), sent as `Authorization: Bearer`. */
  apiKey: string;
  /** The fetch to send requests with (default the global one). */
  fetch?: (request: Request) => Promise<Response>;
  /** How 429 and 503 answers are retried; `false` sends every request once. */
  retries?: RetryOptions | false;
  /** Headers sent with every request (a caller's own `Service-Request-Id` goes per call). */
  headers?: Record<string, string>;
}

/**
 * Gives every call of an operation that takes an Idempotency-Key its own fresh key, unless the caller
 * set one. It is added before the retrying fetch sees the request, so every retry of the call carries
 * the same key and the server does the work once.
 */
const idempotencyKeys: Middleware = {
  onRequest({ request, schemaPath }) {
    if (request.headers.has("idempotency-key")) return undefined;
    if (!IDEMPOTENT_OPERATIONS.has(`${request.method} ${schemaPath}`)) return undefined;
    request.headers.set("idempotency-key", crypto.randomUUID());
    return undefined;
  },
};

/** The API's base URL for an origin (a trailing `/` or `/v1` is accepted too). */
function apiBase(origin: string): string {
  const trimmed = origin.replace(/\/+$/, "");
  return trimmed.endsWith("/v1") ? trimmed : `${trimmed}/v1`;
}

/**
 * A typed client of one Herald: `client.GET("/workspaces")`,
 * `client.POST("/workspaces/{workspace_id}/posts", { params, body })`, answering `{ data, error,
 * response }` with `error` the problem (application/problem+json) when the status is not 2xx.
 */
export function createHeraldClient(options: HeraldClientOptions): HeraldClient {
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const client = createClient<paths>({
    baseUrl: apiBase(options.baseUrl),
    headers: { ...options.headers, authorization: `Bearer ${options.apiKey}` },
    fetch: options.retries === false ? send : retryingFetch(send, options.retries),
  });
  client.use(idempotencyKeys);
  return client;
}
