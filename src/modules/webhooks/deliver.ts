import { pinnedUrl } from "../../lib/guarded-fetch.ts";
import { checkWebhookUrl } from "./url-rules.ts";
import type { WebhookTransport } from "./transport.ts";

/** What one POST to a receiver is made of. */
export interface WebhookRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
}

/** How one attempt went: `ok` for any 2xx; `status` null when no response came back. */
export interface WebhookOutcome {
  ok: boolean;
  status: number | null;
  /** Why it failed, in words safe to show and store (never the URL, which may carry a token). */
  error: string | null;
  durationMs: number;
}

// The most of a response body read before the connection is dropped; the body itself is ignored.
const MAX_RESPONSE_BYTES = 64 * 1024;

/** Connection errors after which the next address of the host is tried (nothing was sent). */
const CONNECT_ERRORS = new Set([
  "ConnectionRefused",
  "ECONNREFUSED",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "EADDRNOTAVAIL",
  "NetworkUnreachable",
  "HostUnreachable",
]);

/**
 * Sends one delivery. The URL rules run again first (DNS may have changed since the endpoint was
 * saved); the request then goes to an address that check returned, never to a second resolution
 * (DNS rebinding), the next address only when the connection was refused or unreachable.
 */
export async function deliverWebhook(
  transport: WebhookTransport,
  allowPrivateNetwork: boolean,
  request: WebhookRequest,
): Promise<WebhookOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const check = await checkWebhookUrl(request.url, { allowPrivateNetwork, resolve: transport.resolve });
  if (!check.ok)
    return { ok: false, status: null, error: `not sent: the URL ${check.detail}`, durationMs: elapsed() };
  const signal = AbortSignal.timeout(transport.timeoutMs);
  let result: AddressResult = { status: null, error: "no address to connect to", connectFailed: true };
  for (const address of check.addresses) {
    result = await sendToAddress(transport, check.url, address, request, signal);
    if (!result.connectFailed) break;
  }
  const ok = result.status !== null && result.status >= 200 && result.status < 300;
  return { ok, status: result.status, error: result.error, durationMs: elapsed() };
}

/** What one address answered; `connectFailed` when nothing was sent and another address may be tried. */
export interface AddressResult {
  status: number | null;
  error: string | null;
  connectFailed: boolean;
}

/**
 * POSTs to one checked address: `<scheme>://<address>:<port><path>` with the Host header set to
 * the URL's host and, over TLS, the server name (SNI and the certificate check) set to the URL's
 * host name. Redirects are returned, not followed (a 3xx is a failure).
 */
export async function sendToAddress(
  transport: WebhookTransport,
  url: URL,
  address: string,
  request: WebhookRequest,
  signal: AbortSignal,
): Promise<AddressResult> {
  try {
    const response = await transport.fetch(pinnedUrl(url, address), {
      method: "POST",
      headers: { ...request.headers, host: url.host },
      body: request.body,
      redirect: "manual",
      signal,
      // A fresh connection per attempt over TLS, so every request's certificate is checked for its own host.
      ...(url.protocol === "https:"
        ? {
            keepalive: false,
            tls: {
              serverName: url.hostname.replace(/\.$/, ""),
              ...(transport.ca ? { ca: transport.ca } : {}),
            },
          }
        : {}),
    } as RequestInit);
    // The status decides; a body that breaks off or runs past the time limit changes nothing.
    await drain(response).catch(() => {});
    const ok = response.status >= 200 && response.status < 300;
    const error = ok
      ? null
      : response.status >= 300 && response.status < 400
        ? `HTTP ${response.status}: redirects are not followed`
        : `HTTP ${response.status}`;
    return { status: response.status, error, connectFailed: false };
  } catch (error) {
    const name = (error as { name?: string }).name;
    if (name === "TimeoutError" || name === "AbortError") {
      return { status: null, error: `timed out after ${transport.timeoutMs / 1000} s`, connectFailed: false };
    }
    const code = (error as { code?: string }).code ?? name ?? "unknown";
    return { status: null, error: `connection failed (${code})`, connectFailed: CONNECT_ERRORS.has(code) };
  }
}

/** Reads at most MAX_RESPONSE_BYTES of the response and drops the rest. */
async function drain(response: Response): Promise<void> {
  if (!response.body) return;
  const reader = response.body.getReader();
  let read = 0;
  while (read <= MAX_RESPONSE_BYTES) {
    const { done, value } = await reader.read();
    if (done) return;
    read += value.byteLength;
  }
  await reader.cancel().catch(() => {});
}
