import { AsyncLocalStorage } from "node:async_hooks";
import { ProviderError, type FailureKind, type ProviderDeps } from "./types.ts";
import { boundedBytes } from "../lib/bounded-body.ts";

/** What a tracked run of adapter code sent: whether any call that is not idempotent went out. */
interface SendLog {
  unsafeSent: boolean;
}

const sendLogs = new AsyncLocalStorage<SendLog>();

/**
 * Runs adapter code and types any error it throws: a ProviderError stays as it is; anything else
 * (a bug in an adapter, unreadable media) becomes `not_sent` when no call that could create
 * something had gone out yet, else `outcome_unknown`.
 */
export async function runTyped<T>(input: { operation: string; work: () => Promise<T> }): Promise<T> {
  const log: SendLog = { unsafeSent: false };
  try {
    return await sendLogs.run(log, input.work);
  } catch (error) {
    if (error instanceof ProviderError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    if (!log.unsafeSent) {
      throw new ProviderError("not_sent", `${input.operation} failed before anything was sent: ${message}`, {
        operation: input.operation,
      });
    }
    throw new ProviderError("outcome_unknown", `${input.operation} failed after sending: ${message}`, {
      operation: input.operation,
    });
  }
}

/** Reads when a rate limit resets from a 429's headers, as epoch ms (null when the network did not say). */
export type RetryAtParser = (headers: Headers) => number | null;

/** One provider HTTP call, classified the same way for every adapter. */
export interface ProviderFetchInput {
  deps: ProviderDeps;
  /** Name of the provider call for errors and attempt logs, e.g. `createRecord`. */
  operation: string;
  url: string;
  init?: RequestInit;
  /**
   * True when sending the same request twice cannot create two things (reads, uploads of unattached
   * media, creates guarded by an idempotency key). Decides what an unanswered request means.
   */
  idempotent: boolean;
  /** Parses the network's rate-limit reset header on a 429. */
  retryAt?: RetryAtParser;
  /**
   * The network's own error for a 429 (X's problem JSON, Google's quota reasons); without it the
   * failure is `transient` with `retryAt` and the body's `error` and `message`.
   */
  limitError?: (response: Response) => Promise<ProviderError>;
  /** 3xx statuses that are answers, not redirects (YouTube's 308 Resume Incomplete): handed back. */
  answerStatuses?: readonly number[];
  /**
   * Sends the request on a connection of its own (for upload bodies: a chunk, a segment, a part).
   * Bun's fetch silently sends a PUT (an idempotent method; not a POST) again, body and all, when
   * a reused kept-alive connection drops before the answer; on a fresh connection it never does.
   * A cut chunk then reaches the uploader, which asks the network what it holds and resumes from
   * there (each network's rule) instead of a whole chunk going out twice behind its back.
   */
  freshConnection?: boolean;
}

/**
 * Whether an upload piece (chunk, segment, part) failed in a way sending it again may fix: cut off,
 * timed out or a 5xx (`transient`), but not a 429, which asks Herald to wait instead.
 */
export function isCutUpload(error: unknown): boolean {
  return error instanceof ProviderError && error.kind === "transient" && error.statusCode !== 429;
}

/** Error codes of failures that happen before a single byte of the request reached the server. */
const NOT_SENT_CODES = new Set([
  "ECONNREFUSED",
  "ConnectionRefused",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "FailedToOpenSocket",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "CERT_HAS_EXPIRED",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/** The most of a provider's answer Herald reads: a hostile server cannot make it buffer gigabytes. */
export const MAX_PROVIDER_RESPONSE_BYTES = 4 * 1024 * 1024;

/** Reads a body up to `limit` bytes; more is an error. */
async function readCapped(response: Response, limit: number): Promise<ArrayBuffer> {
  const declared = Number(response.headers.get("content-length") ?? "0");
  if (declared > limit)
    throw Object.assign(new Error(`answer of ${declared} bytes is over ${limit}`), { code: "ETOOBIG" });
  const bytes = await boundedBytes(response, limit);
  if (bytes === null) throw Object.assign(new Error(`answer is over ${limit} bytes`), { code: "ETOOBIG" });
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

/**
 * Sends one request with `deps.timeoutMs` and returns the Response (body already read, so a later
 * `json()` cannot time out) for 1xx-4xx statuses other than 429; adapters map 4xx bodies to kinds.
 * Throws ProviderError for the failures every network shares:
 * - connection refused, DNS or TLS failure (nothing was sent) → `transient`;
 * - timeout, reset or any other error once the request may have been sent → `outcome_unknown`,
 *   or `transient` when the call is idempotent;
 * - 429 → `transient` with `retryAt` from the adapter's header parser;
 * - 5xx → `transient`, except on a non-idempotent call where the status admits the server may have
 *   acted: 500 (the handler failed part-way; Meta has published on 500s) and 504 (a gateway gave up
 *   waiting for a server that may still finish) are `outcome_unknown`. 502, 503 and other 5xx say
 *   the request was not served and stay `transient`.
 */
export async function providerFetch(input: ProviderFetchInput): Promise<Response> {
  const { deps, operation, url, init = {}, idempotent } = input;
  const timeout = AbortSignal.timeout(deps.timeoutMs);
  const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
  let response: Response;
  let body: ArrayBuffer;
  try {
    const log = sendLogs.getStore();
    if (log && !idempotent) log.unsafeSent = true;
    // Redirects are never followed: a provider origin must not bounce Herald to another host (SSRF).
    response = await deps.fetch(url, {
      ...init,
      signal,
      redirect: "manual",
      ...(input.freshConnection ? { keepalive: false } : {}),
    });
    body = await readCapped(response, MAX_PROVIDER_RESPONSE_BYTES);
  } catch (error) {
    throw networkFailure({
      error,
      operation,
      idempotent,
      timedOut: timeout.aborted,
      timeoutMs: deps.timeoutMs,
    });
  }
  const buffered = new Response(isNullBodyStatus(response.status) ? null : body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  const answer = input.answerStatuses?.includes(response.status) === true;
  if (response.status >= 300 && response.status < 400 && !isNullBodyStatus(response.status) && !answer) {
    throw new ProviderError(
      "rejected",
      `${operation}: the server answered with a redirect (${response.status}), which Herald does not follow`,
      responseDetails({ operation, response: buffered }),
    );
  }
  if (response.status === 429 || response.status >= 500) {
    const errorBody = parseJsonObject(new TextDecoder().decode(body));
    const details = responseDetails({ operation, response: buffered, errorCode: errorCodeOf(errorBody) });
    if (response.status === 429) {
      if (input.limitError) throw await input.limitError(buffered);
      throw new ProviderError("transient", `${operation}: rate limited (429)${errorSuffix(errorBody)}`, {
        ...details,
        retryAt: input.retryAt?.(response.headers) ?? null,
      });
    }
    const kind: FailureKind =
      !idempotent && (response.status === 500 || response.status === 504) ? "outcome_unknown" : "transient";
    throw new ProviderError(
      kind,
      `${operation}: server error ${response.status}${errorSuffix(errorBody)}`,
      details,
    );
  }
  return buffered;
}

/** The ProviderError details every response-based error carries (status, request id). */
export function responseDetails(input: {
  operation: string;
  response: Response;
  errorCode?: string | null;
  subcode?: string | null;
}) {
  return {
    operation: input.operation,
    statusCode: input.response.status,
    errorCode: input.errorCode ?? null,
    subcode: input.subcode ?? null,
    requestId: requestIdOf(input.response.headers),
  };
}

/** The request id header networks send (`x-request-id`), or null. */
export function requestIdOf(headers: Headers): string | null {
  return headers.get("x-request-id") ?? headers.get("x-amzn-requestid") ?? null;
}

/** Parses a JSON body, or null when the body is not JSON (HTML error pages, empty bodies). */
export async function readJson(response: Response): Promise<Record<string, any> | null> {
  return parseJsonObject(await response.text());
}

function parseJsonObject(text: string): Record<string, any> | null {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, any>)
      : null;
  } catch {
    return null;
  }
}

/** A 2xx response's JSON body; a body that is not a JSON object is a `transient` failure (a proxy page). */
export async function expectJson(input: {
  operation: string;
  response: Response;
}): Promise<Record<string, any>> {
  const body = await readJson(input.response);
  if (body === null) {
    throw new ProviderError(
      "transient",
      `${input.operation}: the response (${input.response.status}) is not JSON`,
      responseDetails(input),
    );
  }
  return body;
}

function networkFailure(input: {
  error: unknown;
  operation: string;
  idempotent: boolean;
  timedOut: boolean;
  timeoutMs: number;
}): ProviderError {
  const { error, operation, idempotent } = input;
  const code = errorCode(error);
  const reason = input.timedOut
    ? `no answer within ${input.timeoutMs} ms`
    : `${code ?? "network error"}: ${messageOf(error)}`;
  if (code === "EBLOCKED") {
    // The guard refused the address before connecting: it will refuse it on every retry, too.
    return new ProviderError("blocked", `${operation}: request not sent (${reason})`, {
      operation,
      errorCode: code,
    });
  }
  if (!input.timedOut && code !== null && NOT_SENT_CODES.has(code)) {
    return new ProviderError("transient", `${operation}: request not sent (${reason})`, {
      operation,
      errorCode: code,
    });
  }
  const kind: FailureKind = idempotent ? "transient" : "outcome_unknown";
  const tail = idempotent ? "" : "; the request may have been acted on";
  return new ProviderError(kind, `${operation}: ${reason}${tail}`, {
    operation,
    errorCode: input.timedOut ? "timeout" : code,
  });
}

/** What each network failure code says about the way to the server, completing "Herald could not reach X: …". */
const UNREACHABLE: [codes: string[], reason: string][] = [
  [["ENOTFOUND", "EAI_AGAIN", "ETIMEOUT"], "its name does not resolve"],
  [["ECONNREFUSED", "ConnectionRefused"], "the connection was refused"],
  [["EHOSTUNREACH", "ENETUNREACH", "FailedToOpenSocket"], "there is no route to it"],
  [
    [
      "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
      "CERT_HAS_EXPIRED",
      "DEPTH_ZERO_SELF_SIGNED_CERT",
      "SELF_SIGNED_CERT_IN_CHAIN",
      "ERR_TLS_CERT_ALTNAME_INVALID",
    ],
    "its TLS certificate is not valid",
  ],
  [["timeout", "UND_ERR_CONNECT_TIMEOUT"], "it did not answer in time"],
  [["ECONNRESET", "EPIPE", "ConnectionClosed"], "the connection broke off"],
];

/**
 * Why a failure that got no answer from the network happened, for people ("its name does not
 * resolve (ENOTFOUND)"), or null when the network did answer (a status) or the cause is not one of
 * the ways to a server failing.
 */
export function unreachableReason(error: ProviderError): string | null {
  if (error.statusCode !== null || error.errorCode === null) return null;
  const code = error.errorCode;
  const found = UNREACHABLE.find(([codes]) => codes.includes(code));
  if (!found) return null;
  return code === "timeout" ? found[1] : `${found[1]} (${code})`;
}

/** Bun puts the code on the error, Node's fetch on `error.cause`. */
function errorCode(error: unknown): string | null {
  for (const candidate of [error, (error as { cause?: unknown } | null)?.cause]) {
    const code = (candidate as { code?: unknown } | null)?.code;
    if (typeof code === "string") return code;
  }
  return null;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function isNullBodyStatus(status: number): boolean {
  return status === 101 || status === 204 || status === 205 || status === 304;
}

function errorCodeOf(body: Record<string, any> | null): string | null {
  return typeof body?.error === "string" && /^[A-Za-z_]+$/.test(body.error) ? body.error : null;
}

function errorSuffix(body: Record<string, any> | null): string {
  const text = [body?.error, body?.message ?? body?.error_description].filter(
    (v) => typeof v === "string" && v !== "",
  );
  return text.length > 0 ? `: ${text.join(": ")}` : "";
}
