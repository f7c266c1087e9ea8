import { lookup } from "node:dns/promises";
import ipaddr from "ipaddr.js";
import {
  checkPublicOrigin,
  invalidHostName,
  type OriginCheck,
  type OriginRefusal,
  type Resolver,
} from "../../lib/network-guard.ts";
import { originCheckProblem } from "../../core/origin-problem.ts";

/** The contract's longest webhook URL. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

/** How long one DNS resolution of a webhook host may take. */
const RESOLVE_TIMEOUT_MS = 5_000;

/** Options of the URL rules; `allowPrivateNetwork` is HERALD_DEV_ALLOW_PRIVATE_NETWORK. */
export interface WebhookUrlOptions {
  allowPrivateNetwork: boolean;
  /** Replaces DNS (tests); the system resolver otherwise. */
  resolve?: Resolver;
}

/** The URL and the addresses its host resolved to (connect only to these), or why it is refused. */
export type WebhookUrlCheck = OriginCheck;

/**
 * The contract's URL rules, run at creation, on every change and again before every delivery:
 * at most 2048 characters, `https://` on port 443, a DNS host name (not an IP literal), no
 * embedded credentials, and every address the host resolves to public. The test-only switch
 * admits `http://` URLs whose host is loopback (any port), and nothing else.
 */
export async function checkWebhookUrl(raw: string, options: WebhookUrlOptions): Promise<WebhookUrlCheck> {
  const invalid = (detail: string): OriginRefusal => ({ ok: false, reason: "invalid", detail });
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) {
    return invalid(`must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  }
  // The URL parser silently drops tabs and newlines and trims spaces; refuse them instead.
  if (/[\u0000-\u0020\u007f]/.test(raw)) return invalid("must not contain spaces or control characters");
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return invalid("must be an absolute URL such as https://hooks.example.com/herald");
  }
  const devLoopback = url.protocol === "http:" && options.allowPrivateNetwork;
  if (url.protocol !== "https:" && !devLoopback) {
    return invalid(`must use https://, not ${url.protocol}//`);
  }
  if (url.username !== "" || url.password !== "") return invalid("must not contain a user name or password");
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (!devLoopback) {
    // The parser drops :443 from https URLs, so any port left is another one.
    if (url.port !== "") return invalid(`must use port 443, not ${url.port}`);
    if (ipaddr.isValid(host)) {
      return invalid(`must name its host with a DNS name, not an IP address (${host})`);
    }
    const name = host.replace(/\.$/, "");
    if (!name.includes(".")) {
      const example = "hooks.example.com";
      return invalid(`must name a fully qualified host such as ${example}, not the single label ${name}`);
    }
    const badName = invalidHostName(name);
    if (badName) return invalid(badName);
  }
  const resolve = withTimeout(options.resolve ?? systemResolve);
  // https URLs get the full guard even under the test switch; only http:// loopback is admitted by it.
  const check = await checkPublicOrigin(url, { allowPrivateNetwork: devLoopback, resolve });
  return check.ok ? { ok: true, url, addresses: check.addresses } : check;
}

/**
 * Checks a URL for creation or change: the parsed URL, or the problem pointing at `/url` (400, or
 * 503 when the host does not resolve right now).
 */
export async function requireWebhookUrl(raw: string, options: WebhookUrlOptions): Promise<URL> {
  const check = await checkWebhookUrl(raw, options);
  if (!check.ok) throw originCheckProblem(check, "/url", "The webhook URL");
  return check.url;
}

async function systemResolve(hostname: string): Promise<string[]> {
  return (await lookup(hostname, { all: true, verbatim: true })).map((r) => r.address);
}

/** A resolver that gives up after RESOLVE_TIMEOUT_MS (code ETIMEOUT), so a dead DNS cannot hold a request. */
function withTimeout(resolve: Resolver): Resolver {
  return (hostname) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(Object.assign(new Error("DNS timeout"), { code: "ETIMEOUT" })),
        RESOLVE_TIMEOUT_MS,
      );
    });
    return Promise.race([resolve(hostname), timeout]).finally(() => clearTimeout(timer));
  };
}
