import { lookup } from "node:dns/promises";
import ipaddr from "ipaddr.js";

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** Resolves a host name to every address it has (A and AAAA). */
export type Resolver = (hostname: string) => Promise<string[]>;

/** Options of `checkPublicOrigin`; `allowPrivateNetwork` is HERALD_DEV_ALLOW_PRIVATE_NETWORK. */
export interface OriginGuardOptions {
  /** Test-only: also admits loopback hosts (127/8, ::1, localhost), over http:// too. Nothing else. */
  allowPrivateNetwork: boolean;
  /** Replaces DNS (tests); defaults to `lookup(host, {all: true})`. */
  resolve?: Resolver;
}

/**
 * Why an origin is refused: `invalid` (malformed, against the rules, or a host name that cannot
 * exist), `blocked` (a private, reserved or loopback host), `unresolvable` (DNS gave no answer now;
 * it may later).
 */
export type OriginRefusalReason = "invalid" | "blocked" | "unresolvable";

/** A refused origin: the kind of refusal and a detail that completes "The URL …". */
export type OriginRefusal = { ok: false; reason: OriginRefusalReason; detail: string };

/** Outcome of `checkPublicOrigin`: the parsed URL and the addresses checked, or why it is refused. */
export type OriginCheck = { ok: true; url: URL; addresses: string[] } | OriginRefusal;

/**
 * Top-level domains that never resolve on the public Internet: RFC 6761 (`test`, `example`,
 * `invalid`, `localhost`) and RFC 7686 (`onion`).
 */
const RESERVED_TLDS = new Set(["test", "example", "invalid", "localhost", "onion"]);

// One RFC 1123 label: letters, digits and inner hyphens (IDNs arrive here as punycode, xn--…).
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** Why `name` (lower case, no trailing dot) is not a DNS host name, or null when it is one. */
export function invalidHostName(name: string): string | null {
  if (name.length > 253 || !name.split(".").every((l) => LABEL.test(l))) {
    const rule = "letters, digits and hyphens, labels of 1 to 63 characters";
    return `host ${name} is not a valid DNS host name (${rule})`;
  }
  return null;
}

/** Why a host name whose lookup failed can never resolve publicly, or null when it might later. */
function cannotExist(name: string): string | null {
  const labels = name.split(".");
  const tld = labels[labels.length - 1]!;
  if (RESERVED_TLDS.has(tld)) return `.${tld} is a reserved top-level domain that never resolves publicly`;
  if (labels.length < 2) return "a single label is not a fully qualified host name such as hooks.example.com";
  return null;
}

/** Blocked ranges, most specific first so the detail names the narrowest one. */
const BLOCKED: { cidr: string; label: string }[] = [
  ["0.0.0.0/8", '"this network"'],
  ["10.0.0.0/8", "private"],
  ["100.64.0.0/10", "carrier-grade NAT"],
  ["127.0.0.0/8", "loopback"],
  ["169.254.0.0/16", "link-local"],
  ["172.16.0.0/12", "private"],
  ["192.0.0.0/24", "IETF protocol assignment"],
  ["192.0.2.0/24", "documentation (TEST-NET-1)"],
  ["192.168.0.0/16", "private"],
  ["198.18.0.0/15", "benchmarking"],
  ["198.51.100.0/24", "documentation (TEST-NET-2)"],
  ["203.0.113.0/24", "documentation (TEST-NET-3)"],
  ["255.255.255.255/32", "broadcast"],
  ["224.0.0.0/4", "multicast"],
  ["240.0.0.0/4", "reserved"],
  ["::/128", "unspecified"],
  ["::1/128", "loopback"],
  ["::/96", "IPv4-compatible (deprecated)"],
  ["fc00::/7", "unique local"],
  ["fe80::/10", "link-local"],
  ["fec0::/10", "site-local (deprecated)"],
  ["ff00::/8", "multicast"],
  ["2001:db8::/32", "documentation"],
  ["64:ff9b::/96", "NAT64"],
  ["64:ff9b:1::/48", "local-use NAT64"],
  ["::ffff:0:0/96", "IPv4-translated"],
  ["100::/64", "discard-only"],
  ["2001::/32", "Teredo"],
  ["2002::/16", "6to4"],
].map(([cidr, label]) => ({ cidr: cidr!, label: label! }));

const PARSED = BLOCKED.map((b) => ({ ...b, range: ipaddr.parseCIDR(b.cidr) }));

/** The blocked range an address falls in ("10.0.0.0/8, private"), or null for a public address. */
function blockedRange(ip: string): { cidr: string; label: string } | null {
  let address: Address;
  try {
    address = ipaddr.parse(ip);
  } catch {
    return { cidr: ip, label: "unparseable" };
  }
  if (address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress())
    address = (address as ipaddr.IPv6).toIPv4Address();
  for (const b of PARSED) {
    if (b.range[0].kind() === address.kind() && address.match(b.range))
      return { cidr: b.cidr, label: b.label };
  }
  // Anything else ipaddr.js does not call global unicast (new special-purpose ranges) is refused too.
  const range = address.range();
  return range === "unicast" ? null : { cidr: ip, label: range };
}

/**
 * True when the address (IPv4, IPv6, IPv4-mapped IPv6) is private, loopback, link-local or otherwise
 * reserved.
 */
export function isPrivateAddress(ip: string): boolean {
  return blockedRange(ip) !== null;
}

/** True for 127/8, ::1 and ::ffff:127.x.y.z. */
export function isLoopbackAddress(ip: string): boolean {
  const range = blockedRange(ip);
  return range?.label === "loopback";
}

/**
 * The SSRF guard for every outgoing URL Herald is given (destination origins, webhook URLs): the URL
 * must be https without credentials and every address its host resolves to must be public. Run it
 * again before each delivery (DNS can change), and connect only to the addresses it returns where the
 * HTTP client allows it.
 */
export async function checkPublicOrigin(
  input: string | URL,
  options: OriginGuardOptions,
): Promise<OriginCheck> {
  const invalid = (detail: string): OriginRefusal => ({ ok: false, reason: "invalid", detail });
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return invalid("must be an absolute URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return invalid(`must use https://, not ${url.protocol}//`);
  }
  if (url.protocol === "http:" && !options.allowPrivateNetwork) {
    return invalid("must use https:// (http:// is only admitted for loopback hosts in test setups)");
  }
  if (url.username !== "" || url.password !== "") {
    return invalid("must not contain a user name or password");
  }
  const host = url.hostname
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "")
    .toLowerCase();
  const loopbackName = host === "localhost" || host.endsWith(".localhost");
  if (loopbackName && !options.allowPrivateNetwork) {
    return { ok: false, reason: "blocked", detail: `host ${host} is a loopback name` };
  }
  if (!ipaddr.isValid(host)) {
    const badName = invalidHostName(host);
    if (badName) return invalid(badName);
    if (host.endsWith(".invalid")) return invalid(`host ${host} cannot exist: ${cannotExist(host)}`);
  }
  const addresses = await addressesOf(host, options.resolve ?? systemResolve);
  if (typeof addresses === "string") {
    const why = cannotExist(host);
    if (why !== null) return invalid(`${addresses}: ${why}`);
    return { ok: false, reason: "unresolvable", detail: addresses };
  }
  for (const address of addresses) {
    const range = blockedRange(address);
    const admitted =
      range === null ? !loopbackName : options.allowPrivateNetwork && range.label === "loopback";
    if (!admitted) {
      const what =
        range === null
          ? "a public address, but a loopback name must resolve to loopback"
          : `a ${range.label} address (${range.cidr})`;
      const verb = ipaddr.isValid(host) ? "is" : `resolves to ${address},`;
      return { ok: false, reason: "blocked", detail: `host ${host} ${verb} ${what}` };
    }
    if (url.protocol === "http:" && range === null) {
      const rule = "http:// is only admitted for loopback hosts";
      return invalid(`must use https:// (${rule}, and ${host} is not one)`);
    }
  }
  return { ok: true, url, addresses };
}

/** The addresses to check: the literal itself, or every address DNS gives; a string says why none. */
async function addressesOf(host: string, resolve: Resolver): Promise<string[] | string> {
  if (ipaddr.isValid(host)) return [host];
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    return `host ${host} could not be resolved${typeof code === "string" ? ` (${code})` : ""}`;
  }
  return addresses.length > 0 ? addresses : `host ${host} has no addresses`;
}

async function systemResolve(hostname: string): Promise<string[]> {
  const results = await lookup(hostname, { all: true, verbatim: true });
  return results.map((r) => r.address);
}
