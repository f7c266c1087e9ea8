import ipaddr from "ipaddr.js";

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Range = [Address, number];

/** Dotted-quad IPv4 or IPv6 only: ipaddr.js would also take `10` or `0x0a.1` as IPv4, which no proxy writes. */
function isPlainAddress(text: string): boolean {
  return ipaddr.IPv4.isValidFourPartDecimal(text) || ipaddr.IPv6.isValid(text);
}

/**
 * An address as a comparable value: IPv4-mapped IPv6 (`::ffff:10.0.0.1`, as a dual-stack socket
 * reports IPv4 peers) becomes IPv4; a port (`10.0.0.1:5000`, `[::1]:5000`) is dropped. Null when the
 * text is not an address.
 */
export function parseAddress(text: string): Address | null {
  let value = text.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(value);
  if (bracketed) value = bracketed[1]!;
  else if (/^[\d.]+:\d+$/.test(value)) value = value.slice(0, value.lastIndexOf(":"));
  if (!isPlainAddress(value)) return null;
  return ipaddr.process(value);
}

/**
 * Parses a list of CIDR ranges (`10.0.0.0/8, 192.168.1.5, ::1`; a bare address is a range of one),
 * separated by commas or spaces. Throws an Error naming the first entry that is not one.
 */
export function parseCidrList(list: string): Range[] {
  const ranges: Range[] = [];
  for (const entry of list.split(/[\s,]+/).filter((e) => e !== "")) {
    try {
      if (entry.includes("/")) {
        if (!isPlainAddress(entry.slice(0, entry.indexOf("/")))) throw new Error("not an address");
        const [address, bits] = ipaddr.parseCIDR(entry);
        ranges.push(
          address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress()
            ? [(address as ipaddr.IPv6).toIPv4Address(), Math.max(0, bits - 96)]
            : [address, bits],
        );
      } else {
        if (!isPlainAddress(entry)) throw new Error("not an address");
        const address = ipaddr.process(entry);
        ranges.push([address, address.kind() === "ipv4" ? 32 : 128]);
      }
    } catch {
      throw new Error(`${JSON.stringify(entry)} is not an address or CIDR range`);
    }
  }
  return ranges;
}

/**
 * Which peers may say who their client is (`X-Forwarded-For`): the operator's reverse proxies. An
 * address from anyone else is believed as the socket reports it, whatever its headers claim.
 */
export class TrustedProxies {
  constructor(private readonly ranges: readonly Range[]) {}

  /** Whether any proxy is trusted (when none is, the header is never read). */
  get empty(): boolean {
    return this.ranges.length === 0;
  }

  trusts(address: Address): boolean {
    return this.ranges.some(([range, bits]) => address.kind() === range.kind() && address.match(range, bits));
  }

  /**
   * The client of a request whose socket peer is `peer`: the peer itself unless it is a trusted proxy;
   * then `X-Forwarded-For` read from the right (each trusted hop appended the address it saw), the
   * first address that is not a trusted proxy. The entries left of it are the client's own claims and
   * are never believed. When every entry is a trusted proxy, the left-most; when an entry is not an
   * address, the trusted hop that reported it.
   */
  clientOf(peer: string, forwardedFor: string | null): string {
    const peerAddress = parseAddress(peer);
    if (!peerAddress || this.empty || !this.trusts(peerAddress)) return peerAddress?.toString() ?? peer;
    let client = peerAddress;
    const hops = (forwardedFor ?? "")
      .split(",")
      .map((hop) => hop.trim())
      .filter((hop) => hop !== "");
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = parseAddress(hops[i]!);
      if (!hop) break;
      client = hop;
      if (!this.trusts(hop)) break;
    }
    return client.toString();
  }
}
