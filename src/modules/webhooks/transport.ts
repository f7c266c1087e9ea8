import type { Herald } from "../../herald.ts";
import type { Resolver } from "../../lib/network-guard.ts";

/** How Herald reaches webhook receivers; tests replace parts of it per server. */
export interface WebhookTransport {
  /** DNS: every address of a host name. Undefined uses the system resolver (checkPublicOrigin's default). */
  resolve?: Resolver;
  /** The HTTP client (Bun's fetch; `tls.serverName` pins the certificate check to the URL's host). */
  fetch: (input: string, init: RequestInit) => Promise<Response>;
  /** Time limit of one attempt, connection to response headers and body. */
  timeoutMs: number;
  /** Random source of the retry jitter, in [0, 1). */
  random: () => number;
  /** Extra trusted CA certificates (PEM), on top of the system ones; tests use a local CA. */
  ca?: string[];
}

/** The contract's 10 s per attempt. */
export const DELIVERY_TIMEOUT_MS = 10_000;

const DEFAULT_TRANSPORT: WebhookTransport = {
  fetch: (input, init) => fetch(input, init),
  timeoutMs: DELIVERY_TIMEOUT_MS,
  random: Math.random,
};

// Per Herald value, so two servers in one process (tests) keep their own settings.
const transports = new WeakMap<Herald, WebhookTransport>();

/** The transport of a server: the defaults unless `setWebhookTransport` changed them. */
export function webhookTransport(h: Herald): WebhookTransport {
  return transports.get(h) ?? DEFAULT_TRANSPORT;
}

/** Replaces parts of a server's transport (a stub resolver, a shorter timeout, fixed jitter). */
export function setWebhookTransport(h: Herald, changes: Partial<WebhookTransport>): void {
  transports.set(h, { ...webhookTransport(h), ...changes });
}
