// The command-line client's way to the API: one request with the key, retried when that is safe
// (reads, and writes under an Idempotency-Key, which the server replays instead of doing twice),
// problems as ApiError with their detail and request id, lost connections as NetworkError.
import { HERALD_VERSION } from "../herald.ts";
import { ApiError, NetworkError, UsageError } from "./errors.ts";

export { ApiError, NetworkError };

/** Where to send a request and with which key (null: the no-auth operations). */
export interface Target {
  apiUrl: string;
  apiKey: string | null;
  workspaceId?: string | null;
}

/** Options of one API call. */
export interface CallOptions {
  /**
   * Sent as Idempotency-Key on every try of this call: generate one per command invocation
   * (`randomUUID()`), so the command's own retries are the same operation to the server.
   */
  idempotencyKey?: string;
  /** Tries in all (default 4 for GET and keyed calls, else 1: a plain POST is never sent twice). */
  tries?: number;
}

/** What came back: status, headers and the parsed JSON body (null when there is none). */
export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any;
}

/** Longest wait between tries, even when Retry-After asks for more. */
const MAX_PAUSE_MS = 30_000;

/**
 * The problem in a refused answer as an ApiError: detail, the field errors it does not already say,
 * code and request id.
 */
function problemError(status: number, headers: Headers, parsed: any): ApiError {
  const detail: string = typeof parsed?.detail === "string" ? parsed.detail : `HTTP ${status}`;
  const fields = (Array.isArray(parsed?.errors) ? parsed.errors : [])
    .filter((e: { detail: string }) => !detail.includes(e.detail))
    .map((e: { pointer: string; detail: string }) => `${e.pointer || "(body)"} ${e.detail}`)
    .join("; ");
  const requestId: string | null = parsed?.request_id ?? headers.get("service-request-id");
  const context = [parsed?.code ?? `HTTP ${status}`, requestId ? `request_id ${requestId}` : null]
    .filter(Boolean)
    .join(", ");
  return new ApiError(
    status,
    `${detail}${fields ? ` (${fields})` : ""} [${context}]`,
    parsed?.code ?? null,
    parsed?.retryable === true,
    requestId,
    retryAfterMs(headers, parsed),
    parsed,
  );
}

/** Seconds of a Retry-After header (or a problem's `retry.after`), as milliseconds; null when absent. */
export function retryAfterMs(headers: Headers, body?: any): number | null {
  const header = Number(headers.get("retry-after"));
  if (Number.isFinite(header) && header > 0) return header * 1000;
  const after = Number(body?.retry?.after);
  return Number.isFinite(after) && after > 0 ? after * 1000 : null;
}

/** One try: the answer, or the NetworkError that stood in its way (the body included: it can be lost too). */
async function once(
  target: Target,
  method: string,
  path: string,
  body: unknown,
  idempotencyKey: string | undefined,
): Promise<ApiResponse> {
  let response: Response;
  let text: string;
  try {
    response = await fetch(`${target.apiUrl}/v1${path}`, {
      method,
      headers: {
        "user-agent": `herald-cli/${HERALD_VERSION}`,
        accept: "application/json",
        ...(target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {}),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    text = await response.text();
  } catch (error) {
    throw new NetworkError(`cannot reach Herald at ${target.apiUrl} (${(error as Error).message})`);
  }
  let parsed: any = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  return { status: response.status, headers: response.headers, body: parsed };
}

/**
 * Whether a failed try may be sent again: lost connections, the server's bad moments, rate limits;
 * never a problem Herald itself calls not retryable (a name that does not resolve: a person fixes it).
 */
function worthAnotherTry(error: ApiError, keyed: boolean): boolean {
  if (error instanceof NetworkError) return true;
  // The first try under this key is still running (or its answer was lost mid-way): its result will be
  // replayed once it is stored.
  if (keyed && error.code === "public_idempotency_outcome_unknown") return true;
  if (error.code !== null && !error.retryable) return false;
  return error.status === 429 || (error.status >= 500 && error.status !== 501);
}

/** Waits this long or more are said on stderr, so a command is never silent while it waits. */
const NOTICED_PAUSE_MS = 2_000;

/**
 * Calls the API and returns the whole answer; refusals throw ApiError, trouble on the way NetworkError.
 * GETs and calls with an Idempotency-Key are tried again (Retry-After, else 0.25 s doubling).
 */
export async function request(
  target: Target,
  method: string,
  path: string,
  body?: unknown,
  options: CallOptions = {},
): Promise<ApiResponse> {
  const keyed = options.idempotencyKey !== undefined;
  const tries = options.tries ?? (method === "GET" || keyed ? 4 : 1);
  for (let attempt = 1; ; attempt++) {
    let failure: ApiError;
    try {
      const answer = await once(target, method, path, body, options.idempotencyKey);
      if (answer.status < 400) return answer;
      failure = problemError(answer.status, answer.headers, answer.body);
    } catch (error) {
      if (!(error instanceof NetworkError)) throw error;
      failure = error;
    }
    if (attempt >= tries || !worthAnotherTry(failure, keyed)) throw failure;
    const pause = Math.min(failure.retryAfterMs ?? 250 * 2 ** (attempt - 1), MAX_PAUSE_MS);
    if (pause >= NOTICED_PAUSE_MS)
      process.stderr.write(
        `${failure.message}\nTrying again in ${Math.round(pause / 1000)} s (${attempt + 1} of ${tries} tries)…\n`,
      );
    await Bun.sleep(pause);
  }
}

/** Calls the API and returns the parsed body (see `request`). */
export async function call(
  target: Target,
  method: string,
  path: string,
  body?: unknown,
  options: CallOptions = {},
): Promise<any> {
  return (await request(target, method, path, body, options)).body;
}

/** The workspace a command acts on: the flag, else the connection's default, else the key's only one. */
export async function resolveWorkspace(target: Target, flag: string | undefined): Promise<string> {
  const chosen = flag ?? target.workspaceId;
  if (chosen) return chosen;
  const listing = await call(target, "GET", "/workspaces?limit=100");
  const ids: string[] = (listing?.data ?? []).map((w: { id: string }) => w.id);
  if (ids.length === 1) return ids[0]!;
  throw new UsageError(
    ids.length === 0
      ? "this API key can use no workspace"
      : `this API key can use ${ids.length} workspaces; choose one with --workspace or HERALD_WORKSPACE_ID`,
  );
}

/** A listing page as the API answers it. */
export interface Listing {
  object?: string;
  data: any[];
  has_more: boolean;
  next_cursor: string | null;
}

/**
 * One page of a listing (`limit`, `after`), or with `all` every page followed to the end (as one
 * listing with has_more false).
 */
export async function list(
  target: Target,
  path: string,
  query: Record<string, string | undefined>,
  paging: { limit?: string; after?: string; all?: boolean },
): Promise<Listing> {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, value);
  if (paging.limit !== undefined) params.set("limit", paging.limit);
  else if (paging.all) params.set("limit", "100");
  if (paging.after !== undefined) params.set("after", paging.after);
  const data: any[] = [];
  for (;;) {
    const page: Listing = await call(target, "GET", `${path}?${params}`);
    data.push(...page.data);
    if (!paging.all || !page.has_more || !page.next_cursor) return { ...page, data };
    params.set("after", page.next_cursor);
  }
}
