import type { paths } from "./schema.ts";

type Post =
  paths["/workspaces/{workspace_id}/posts/{post_id}"]["get"]["responses"][200]["content"]["application/json"];

/** The post summary an event carries as `data.object` (`content` only for `content_mode: "full"`). */
export interface EventPostSummary {
  id: string;
  object: "post";
  group: string;
  channel: Post["channel"];
  destination_id: string;
  state: Post["state"];
  scheduled_at: string | null;
  published_at: string | null;
  url: string | null;
  error: Post["last_error"];
  content?: { headline: string | null; body: string[] };
}

/** An event of a post. */
export interface HeraldPostEvent {
  id: string;
  object: "event";
  api_version: "v1";
  type: "post.published" | "post.failed" | "post.awaiting-provider" | "post.needs-attention";
  workspace_id: string;
  created_at: string;
  data: { object: EventPostSummary };
}

/** The event `POST …/webhook-endpoints/{id}/test` sends. */
export interface HeraldTestEvent {
  id: string;
  object: "event";
  api_version: "v1";
  type: "webhook.test";
  workspace_id: string;
  created_at: string;
  data: { object: { id: string; object: "webhook_endpoint" } };
}

/** A webhook delivery's body (switch on `type`). */
export type HeraldEvent = HeraldPostEvent | HeraldTestEvent;

/** Why a delivery was refused. */
export type WebhookVerificationReason =
  | "no_secrets"
  | "missing_signature"
  | "malformed_signature"
  | "timestamp_too_old"
  | "timestamp_in_future"
  | "signature_mismatch"
  | "invalid_body";

/** A delivery that is not Herald's, or not fresh: answer it with a 4xx and do nothing. */
export class WebhookVerificationError extends Error {
  readonly reason: WebhookVerificationReason;

  constructor(reason: WebhookVerificationReason, message: string) {
    super(message);
    this.name = "WebhookVerificationError";
    this.reason = reason;
  }
}

/** What verifyWebhook takes. */
export interface VerifyWebhookOptions {
  /** Every signing secret you hold for the endpoint (`whsec_…`): during a rotation, old and new. */
  secrets: string | readonly string[];
  /** The request's headers: a Headers (fetch, Bun, Deno) or Node's `request.headers`. */
  headers: Headers | Record<string, string | string[] | undefined>;
  /** The raw body, exactly as received: never JSON parsed and re-serialized. */
  body: string | Uint8Array | ArrayBuffer;
  /** How far `t` may be from your clock, either way, in seconds (default 300). */
  toleranceSeconds?: number;
  /** Your clock (ms since the epoch or a Date; default now). */
  now?: number | Date;
}

const SIGNATURE_HEADER = "service-signature";
const encoder = new TextEncoder();

function headerValue(headers: VerifyWebhookOptions["headers"], name: string): string | null {
  if (headers instanceof Headers) return headers.get(name);
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name || value === undefined) continue;
    return Array.isArray(value) ? value.join(",") : value;
  }
  return null;
}

function bytesOf(body: VerifyWebhookOptions["body"]): Uint8Array {
  if (typeof body === "string") return encoder.encode(body);
  return body instanceof Uint8Array ? body : new Uint8Array(body);
}

function hexBytes(hex: string) {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

/** `t` and every `v1` of `Service-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>…]`. */
function parseSignatureHeader(header: string) {
  let timestamp = Number.NaN;
  const signatures: ReturnType<typeof hexBytes>[] = [];
  for (const part of header.split(",")) {
    const [key, value = ""] = part.trim().split("=", 2);
    if (key === "t" && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    if (key === "v1" && /^[0-9a-f]{64}$/i.test(value)) signatures.push(hexBytes(value));
  }
  if (Number.isNaN(timestamp) || signatures.length === 0)
    throw new WebhookVerificationError(
      "malformed_signature",
      "Service-Signature is not t=<unix seconds>,v1=<64 hex digits>",
    );
  return { timestamp, signatures };
}

/**
 * Checks a webhook delivery and returns its event: the `Service-Signature` must carry a `v1` that is
 * the HMAC-SHA256 of `<t>.<raw body>` under one of `secrets`, and `t` must be within
 * `toleranceSeconds` of now. Signatures are checked with WebCrypto's `verify` (a constant-time
 * comparison), so this runs in Node 20+, Bun, Deno and edge runtimes. Throws WebhookVerificationError
 * with a `reason` otherwise.
 */
export async function verifyWebhook(options: VerifyWebhookOptions): Promise<HeraldEvent> {
  const secrets = (typeof options.secrets === "string" ? [options.secrets] : options.secrets).filter(
    (s) => s.length > 0,
  );
  if (secrets.length === 0) throw new WebhookVerificationError("no_secrets", "no signing secret was given");
  const header = headerValue(options.headers, SIGNATURE_HEADER);
  if (!header)
    throw new WebhookVerificationError("missing_signature", "the Service-Signature header is missing");
  const { timestamp, signatures } = parseSignatureHeader(header);

  const nowMs = options.now === undefined ? Date.now() : Number(options.now);
  const tolerance = options.toleranceSeconds ?? 300;
  const age = Math.floor(nowMs / 1000) - timestamp;
  if (age > tolerance)
    throw new WebhookVerificationError(
      "timestamp_too_old",
      `the signature is ${age} s old (tolerance ${tolerance} s)`,
    );
  if (age < -tolerance)
    throw new WebhookVerificationError(
      "timestamp_in_future",
      `the signature is ${-age} s in the future (tolerance ${tolerance} s)`,
    );

  const body = bytesOf(options.body);
  const prefix = encoder.encode(`${timestamp}.`);
  const signed = new Uint8Array(prefix.length + body.length);
  signed.set(prefix);
  signed.set(body, prefix.length);
  let matched = false;
  for (const secret of secrets) {
    const key = await crypto.subtle.importKey(
      "raw",
      encoder.encode(secret),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["verify"],
    );
    for (const signature of signatures)
      if (await crypto.subtle.verify("HMAC", key, signature, signed)) matched = true;
  }
  if (!matched)
    throw new WebhookVerificationError("signature_mismatch", "no signature matches a secret you hold");

  try {
    return JSON.parse(new TextDecoder().decode(body)) as HeraldEvent;
  } catch {
    throw new WebhookVerificationError("invalid_body", "the signed body is not JSON");
  }
}
