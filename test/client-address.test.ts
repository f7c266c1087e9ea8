// Client addresses (HERALD_TRUSTED_PROXIES): X-Forwarded-For is believed only from a trusted peer,
// read from the right; anyone else's header is ignored. Unit table, config, and the real server's
// per-address limit keyed by what it believes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../src/config.ts";
import { parseCidrList, TrustedProxies } from "../src/lib/client-address.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";

const proxies = (list: string) => new TrustedProxies(parseCidrList(list));

describe("which address is the client", () => {
  const trusted = proxies("10.0.0.0/8, 192.168.1.5, ::1");
  const cases: [string, string, string | null, string][] = [
    ["an untrusted peer's header is ignored", "203.0.113.9", "198.51.100.1", "203.0.113.9"],
    ["an untrusted peer without a header", "203.0.113.9", null, "203.0.113.9"],
    ["a trusted peer without a header is the client", "10.0.0.2", null, "10.0.0.2"],
    ["a trusted peer: the address it saw", "10.0.0.2", "198.51.100.1", "198.51.100.1"],
    [
      "spoofed entries left of the right-most untrusted one are ignored",
      "10.0.0.2",
      "1.1.1.1, 198.51.100.1",
      "198.51.100.1",
    ],
    [
      "trusted hops are skipped from the right",
      "10.0.0.2",
      "1.1.1.1, 198.51.100.1, 10.9.9.9, 192.168.1.5",
      "198.51.100.1",
    ],
    ["every hop trusted: the left-most", "10.0.0.2", "10.1.1.1, 10.2.2.2", "10.1.1.1"],
    [
      "a hop that is not an address: the trusted hop that reported it",
      "10.0.0.2",
      "nonsense, 10.3.3.3",
      "10.3.3.3",
    ],
    ["a bare garbage header: the peer", "10.0.0.2", "unknown", "10.0.0.2"],
    ["IPv4-mapped peer matches an IPv4 range", "::ffff:10.0.0.2", "198.51.100.1", "198.51.100.1"],
    ["IPv6 peer and client", "::1", "2001:db8::7", "2001:db8::7"],
    ["ports are dropped", "10.0.0.2", "198.51.100.1:4711", "198.51.100.1"],
    ["bracketed IPv6 with a port", "10.0.0.2", "[2001:db8::7]:443", "2001:db8::7"],
    ["a peer just outside a single-address range", "192.168.1.6", "198.51.100.1", "192.168.1.6"],
  ];
  for (const [name, peer, header, client] of cases)
    test(name, () => expect(trusted.clientOf(peer, header)).toBe(client));

  test("with no trusted proxies the header never counts", () => {
    expect(proxies("").clientOf("10.0.0.2", "198.51.100.1")).toBe("10.0.0.2");
  });
});

describe("HERALD_TRUSTED_PROXIES", () => {
  test("empty by default; a list of ranges and addresses, commas or spaces", () => {
    expect(loadConfig({}).trustedProxies).toEqual([]);
    expect(loadConfig({ HERALD_TRUSTED_PROXIES: "10.0.0.0/8, 127.0.0.1 ::1" }).trustedProxies).toEqual([
      "10.0.0.0/8",
      "127.0.0.1",
      "::1",
    ]);
  });

  test("an entry that is not a range or address stops the start, naming it", () => {
    for (const bad of ["10.0.0.0/33", "proxy.internal", "10", "10.0.0.1:80", "fe80::/200"]) {
      let error: unknown;
      try {
        loadConfig({ HERALD_TRUSTED_PROXIES: `127.0.0.1, ${bad}` });
      } catch (thrown) {
        error = thrown;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toBe(
        `HERALD_TRUSTED_PROXIES: ${JSON.stringify(bad)} is not an address or CIDR range (use e.g. 10.0.0.0/8, ::1)`,
      );
    }
  });
});

/** Sends one request with a bad key, as the client `forwardedFor` names. */
async function badKey(s: TestServer, forwardedFor: string) {
  return s.request("GET", "/v1/account", {
    key: "hk_live_wrong",
    headers: { "x-forwarded-for": forwardedFor },
  });
}

describe("the server limits by the address it believes", () => {
  let behindProxy: TestServer;
  let direct: TestServer;
  beforeAll(async () => {
    const limit = { HERALD_AUTH_FAILURES_PER_MINUTE: "2" };
    behindProxy = await startTestServer({ env: { ...limit, HERALD_TRUSTED_PROXIES: "127.0.0.1/32" } });
    direct = await startTestServer({ env: limit });
  });
  afterAll(async () => {
    await behindProxy.stop();
    await direct.stop();
  });

  test("behind a trusted proxy, one client's failures do not limit another's", async () => {
    for (let i = 0; i < 2; i++) expect((await badKey(behindProxy, "198.51.100.1")).status).toBe(401);
    expect((await badKey(behindProxy, "198.51.100.1")).status).toBe(429);
    // A spoofed left-hand entry does not make a new client: the proxy appended the real one.
    expect((await badKey(behindProxy, "203.0.113.77, 198.51.100.1")).status).toBe(429);
    expect((await badKey(behindProxy, "198.51.100.2")).status).toBe(401);
  });

  test("from an untrusted peer, a forged header does not escape the peer's limit", async () => {
    for (let i = 0; i < 2; i++) expect((await badKey(direct, `198.51.100.${10 + i}`)).status).toBe(401);
    expect((await badKey(direct, "198.51.100.99")).status).toBe(429);
  });
});
