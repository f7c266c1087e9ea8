import { checkPublicOrigin, type Resolver } from "./network-guard.ts";

/** A fetch that may only reach public addresses (see `createGuardedFetch`). */
export type GuardedFetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

/** Thrown when a URL's host is, or now resolves to, an address Herald must not call. */
export class BlockedAddressError extends Error {
  /** Read by error classifiers: nothing was sent. */
  readonly code = "EBLOCKED";
}

/**
 * Thrown when a URL's host does not resolve now: a failure on the way (DNS may answer later), not a
 * refusal, so it carries the code a failed lookup has.
 */
export class UnresolvableHostError extends Error {
  readonly code = "ENOTFOUND";
}

/** The URL with its host replaced by a checked address (IPv6 in brackets); path, query and port kept. */
export function pinnedUrl(url: URL, address: string): string {
  const pinned = new URL(url);
  pinned.hostname = address.includes(":") ? `[${address}]` : address;
  return pinned.toString();
}

/**
 * A fetch for calls to URLs users chose (provider origins): every call runs the SSRF guard again
 * (DNS may have changed since the destination was connected) and connects to the address that was
 * checked, never to a second resolution (DNS rebinding). `Host` and, over TLS, the server name (SNI
 * and the certificate check) stay the URL's host. Redirects are returned, not followed. A host that
 * does not resolve fails like a lookup (ENOTFOUND); a refused address with BlockedAddressError.
 */
export function createGuardedFetch(options: {
  allowPrivateNetwork: boolean;
  resolve?: Resolver;
  fetch?: typeof fetch;
}): GuardedFetch {
  const base = options.fetch ?? fetch;
  return async (input, init = {}) => {
    const check = await checkPublicOrigin(input, {
      allowPrivateNetwork: options.allowPrivateNetwork,
      resolve: options.resolve,
    });
    if (!check.ok && check.reason === "unresolvable") throw new UnresolvableHostError(check.detail);
    if (!check.ok) throw new BlockedAddressError(`refused to call ${new URL(input).host}: ${check.detail}`);
    const headers = new Headers(init.headers);
    headers.set("host", check.url.host);
    const tls =
      check.url.protocol === "https:"
        ? { tls: { serverName: check.url.hostname.replace(/\.$/, "") }, keepalive: false }
        : {};
    return base(pinnedUrl(check.url, check.addresses[0]!), {
      ...init,
      headers,
      redirect: "manual",
      ...tls,
    } as RequestInit);
  };
}
