// Turns a fuzz case into the exact HTTP request, sends it to the live server and reads the answer.
import type { FuzzCase } from "./cases.ts";
import { MALFORMED_AUTHORIZATIONS } from "./cases.ts";
import type { Operation } from "./document.ts";
import type { World } from "./world.ts";

/** The request exactly as sent: what a failure prints to reproduce it. */
export interface SentRequest {
  method: string;
  /** Path and query, from the origin: `/v1/workspaces/ws_…?limit=5`. */
  target: string;
  headers: Record<string, string>;
  body: string | null;
  /** Sent in chunks without a Content-Length. */
  chunked?: boolean;
}

/** The answer, with the body parsed when it says it is JSON (`parseError` when it was not). */
export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: unknown;
  parseError: string | null;
}

let fresh = 0;

/** Percent-encodes `text`; a lone surrogate, which UTF-8 cannot hold, goes as its WTF-8 bytes. */
export function encode(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return [...text]
      .map((ch) => {
        const unit = ch.charCodeAt(0);
        if (ch.length > 1 || unit < 0xd800 || unit > 0xdfff) return encodeURIComponent(ch);
        const bytes = [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)];
        return bytes.map((b) => `%${b.toString(16).toUpperCase()}`).join("");
      })
      .join("");
  }
}

/** The operation's own path with the case's parameters, percent-encoded. */
function targetOf(op: Operation, c: FuzzCase): string {
  const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => encode(c.params[name] ?? ""));
  const query = c.query.map(([k, v]) => `${encode(k)}=${encode(v)}`).join("&");
  return `/v1${path}${query ? `?${query}` : ""}`;
}

async function authorizationOf(world: World, op: Operation, c: FuzzCase): Promise<string | null> {
  // Revoking the calling key would lock the fuzzer out: that operation gets a key of its own each time.
  const own = op.name === "POST /me/revoke";
  const key = async (kind: "live" | "test", scopes?: ["workspaces:read"]) =>
    own ? world.s.createKey({ environment: kind, scopes }) : null;
  switch (c.key) {
    case "none":
      return null;
    case "live":
      return `Bearer ${(await key("live")) ?? world.keys.live}`;
    case "test":
      return `Bearer ${(await key("test")) ?? world.keys.test}`;
    case "narrow":
      return `Bearer ${(await key("live", ["workspaces:read"])) ?? world.keys.narrow}`;
    case "other-account":
      return `Bearer ${world.keys.otherAccount}`;
    case "malformed":
      // Some of these still carry the live key (`bearer <key>`), which a revocation would revoke.
      return MALFORMED_AUTHORIZATIONS[c.malformed]!.replace("{live}", (await key("live")) ?? world.keys.live);
  }
}

/** The resource's ETag now, read with the live key (a made-up one when it cannot be read). */
async function currentETag(world: World, target: string): Promise<string> {
  const r = await fetch(world.s.url + target.replace(/\?.*$/, ""), {
    headers: { authorization: `Bearer ${world.keys.live}` },
  });
  await r.arrayBuffer();
  return r.headers.get("etag") ?? '"no-etag"';
}

/** Builds the request of `c`. */
export async function requestOf(world: World, op: Operation, c: FuzzCase): Promise<SentRequest> {
  const target = targetOf(op, c);
  const headers: Record<string, string> = {};
  const authorization = await authorizationOf(world, op, c);
  if (authorization !== null) headers.authorization = authorization;
  let body: string | null = null;
  if (c.body.kind === "json") body = JSON.stringify(c.body.value);
  if (c.body.kind === "raw") body = c.body.text;
  if (body !== null) headers["content-type"] = "application/json";
  Object.assign(headers, c.headers);
  if (c.idempotencyKey !== null)
    headers["idempotency-key"] =
      c.idempotencyKey === "fresh" ? `fuzz-${Date.now()}-${++fresh}` : c.idempotencyKey;
  if (c.ifMatch !== null)
    headers["if-match"] = c.ifMatch === "current" ? await currentETag(world, target) : c.ifMatch;
  return { method: op.method, target, headers, body, chunked: c.chunked };
}

/** `text` as a stream of 64 KiB pieces: Bun sends it chunked, with no Content-Length to check first. */
function chunks(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.subarray(at, at + 65_536));
      at += 65_536;
    },
  });
}

/** Sends it over real HTTP; null when the client itself refused to send it (an unsendable header). */
export async function send(world: World, request: SentRequest): Promise<Answer | null> {
  let response: Response;
  try {
    response = await fetch(world.s.url + request.target, {
      method: request.method,
      headers: request.headers,
      body: request.chunked && request.body !== null ? chunks(request.body) : request.body,
      signal: AbortSignal.timeout(15_000),
    });
  } catch (error) {
    if (error instanceof TypeError && /header/i.test(error.message)) return null;
    throw error;
  }
  const text = await response.text();
  let body: unknown;
  let parseError: string | null = null;
  if (/json/.test(response.headers.get("content-type") ?? ""))
    try {
      body = JSON.parse(text);
    } catch (error) {
      parseError = String(error);
    }
  return { status: response.status, headers: response.headers, text, body, parseError };
}

/** The request and its answer as text a person can replay (curl-like). */
export function describe(request: SentRequest | null, answer: Answer | null): string {
  if (!request) return "(no request was made)";
  const { target } = request;
  const shown = target.length > 2000 ? `${target.slice(0, 2000)}… (${target.length} chars)` : target;
  const lines = [`${request.method} ${shown}`];
  const cut = (v: string) => (v.length > 300 ? `${v.slice(0, 300)}… (${v.length} chars)` : v);
  for (const [name, value] of Object.entries(request.headers)) lines.push(`${name}: ${cut(value)}`);
  if (request.chunked) lines.push("transfer-encoding: chunked");
  if (request.body !== null)
    lines.push(
      "",
      request.body.length > 2000
        ? `${request.body.slice(0, 2000)}… (${request.body.length} chars)`
        : request.body,
    );
  if (answer)
    lines.push(
      "",
      `→ ${answer.status} ${answer.headers.get("content-type") ?? ""}`,
      answer.text.slice(0, 1500),
    );
  return lines.join("\n");
}
