import { describe, expect, test } from "bun:test";
import {
  checkPublicOrigin,
  isPrivateAddress,
  type OriginRefusal,
  type Resolver,
} from "../src/lib/network-guard.ts";
import { ProblemError } from "../src/core/problem.ts";
import { originCheckProblem } from "../src/core/origin-problem.ts";

/** A stub DNS: names map to fixed address lists; anything else is NXDOMAIN. */
const dns: Record<string, string[]> = {
  "public.example": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
  "rebind.example": ["127.0.0.1"],
  "mixed.example": ["93.184.215.14", "10.0.0.7"],
  "mapped.example": ["::ffff:192.168.1.1"],
  localhost: ["127.0.0.1", "::1"],
  "evil.localhost": ["93.184.215.14"],
  "empty.example": [],
};
/** Hosts whose resolver fails for now, with the error code. */
const failing: Record<string, string> = { "flaky.example.org": "EAI_AGAIN", "slow.example.org": "ETIMEOUT" };
const looked: string[] = [];
const resolve: Resolver = async (host) => {
  looked.push(host);
  const code = failing[host];
  if (code) throw Object.assign(new Error(`getaddrinfo ${code} ${host}`), { code });
  const found = dns[host];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
  return found;
};

describe("isPrivateAddress", () => {
  const blocked = [
    "0.0.0.0",
    "0.255.255.255",
    "10.0.0.1",
    "10.255.255.255",
    "100.64.0.1",
    "100.127.255.255",
    "127.0.0.1",
    "127.255.255.254",
    "169.254.169.254",
    "172.16.0.1",
    "172.31.255.255",
    "192.0.0.8",
    "192.0.2.1",
    "192.168.0.1",
    "198.18.0.1",
    "198.19.255.255",
    "198.51.100.7",
    "203.0.113.9",
    "224.0.0.1",
    "239.255.255.255",
    "240.0.0.1",
    "255.255.255.255",
    "::",
    "::1",
    "fc00::1",
    "fd12:3456::1",
    "fe80::1",
    "febf::1",
    "ff02::1",
    "2001:db8::1",
    "64:ff9b::a00:1",
    "::ffff:127.0.0.1",
    "::ffff:10.1.2.3",
    "::ffff:169.254.169.254",
    "::127.0.0.1",
    "fec0::1",
  ];
  const allowed = [
    "1.1.1.1",
    "8.8.8.8",
    "9.255.255.255",
    "11.0.0.0",
    "100.63.255.255",
    "100.128.0.0",
    "172.15.255.255",
    "172.32.0.0",
    "192.167.255.255",
    "198.17.255.255",
    "198.20.0.0",
    "223.255.255.255",
    "2606:4700::1111",
    "2001:db9::1",
    "::ffff:8.8.8.8",
    "2a00:1450:4001:82a::200e",
  ];
  for (const ip of blocked)
    test(`${ip} is private or reserved`, () => expect(isPrivateAddress(ip)).toBe(true));
  for (const ip of allowed) test(`${ip} is public`, () => expect(isPrivateAddress(ip)).toBe(false));
});

describe("checkPublicOrigin", () => {
  const cases: { url: string; allowPrivateNetwork?: boolean; ok: boolean; detail?: string }[] = [
    { url: "https://public.example", ok: true },
    { url: "https://public.example:8443/path?q=1", ok: true },
    { url: "https://93.184.215.14", ok: true },
    { url: "not a url", ok: false, detail: "must be an absolute URL" },
    { url: "ftp://public.example", ok: false, detail: "must use https://, not ftp://" },
    { url: "http://public.example", ok: false, detail: "must use https://" },
    {
      url: "http://public.example",
      allowPrivateNetwork: true,
      ok: false,
      detail: "public.example is not one",
    },
    {
      url: "https://user:pass@public.example",
      ok: false,
      detail: "must not contain a user name or password",
    },
    { url: "https://user@public.example", ok: false, detail: "must not contain a user name or password" },
    { url: "https://10.1.2.3", ok: false, detail: "host 10.1.2.3 is a private address (10.0.0.0/8)" },
    {
      url: "https://169.254.169.254/latest/meta-data",
      ok: false,
      detail: "link-local address (169.254.0.0/16)",
    },
    { url: "https://[::1]", ok: false, detail: "loopback address (::1/128)" },
    { url: "https://[fd00::1]", ok: false, detail: "unique local address (fc00::/7)" },
    { url: "https://[::ffff:7f00:1]", ok: false, detail: "loopback address (127.0.0.0/8)" },
    { url: "https://0x7f.1", ok: false, detail: "host 127.0.0.1 is a loopback address" },
    { url: "https://2130706433", ok: false, detail: "host 127.0.0.1 is a loopback address" },
    {
      url: "https://rebind.example",
      ok: false,
      detail: "host rebind.example resolves to 127.0.0.1, a loopback address (127.0.0.0/8)",
    },
    {
      url: "https://mixed.example",
      ok: false,
      detail: "resolves to 10.0.0.7, a private address (10.0.0.0/8)",
    },
    {
      url: "https://mapped.example",
      ok: false,
      detail: "resolves to ::ffff:192.168.1.1, a private address (192.168.0.0/16)",
    },
    {
      url: "https://nxdomain.example",
      ok: false,
      detail: "host nxdomain.example could not be resolved (ENOTFOUND)",
    },
    { url: "https://empty.example", ok: false, detail: "host empty.example has no addresses" },
    { url: "https://localhost", ok: false, detail: "host localhost is a loopback name" },
    { url: "https://localhost.", ok: false, detail: "host localhost is a loopback name" },
    // The test-only switch admits loopback, over http too, and nothing else.
    { url: "http://127.0.0.1:4000", allowPrivateNetwork: true, ok: true },
    { url: "http://[::1]:4000", allowPrivateNetwork: true, ok: true },
    { url: "http://localhost:4000", allowPrivateNetwork: true, ok: true },
    { url: "https://rebind.example", allowPrivateNetwork: true, ok: true },
    { url: "http://10.0.0.1", allowPrivateNetwork: true, ok: false, detail: "private address" },
    { url: "http://192.168.1.10:8080", allowPrivateNetwork: true, ok: false, detail: "private address" },
    { url: "https://mixed.example", allowPrivateNetwork: true, ok: false, detail: "10.0.0.7" },
    {
      url: "http://evil.localhost",
      allowPrivateNetwork: true,
      ok: false,
      detail: "a loopback name must resolve to loopback",
    },
    {
      url: "http://user:pw@127.0.0.1",
      allowPrivateNetwork: true,
      ok: false,
      detail: "user name or password",
    },
  ];
  for (const c of cases) {
    test(`${c.url}${c.allowPrivateNetwork ? " (private network allowed)" : ""} → ${c.ok ? "ok" : "refused"}`, async () => {
      const result = await checkPublicOrigin(c.url, {
        allowPrivateNetwork: c.allowPrivateNetwork ?? false,
        resolve,
      });
      expect(result.ok).toBe(c.ok);
      if (!result.ok) expect(result.detail).toContain(c.detail!);
    });
  }

  test("returns the parsed URL and every address checked", async () => {
    const result = await checkPublicOrigin("https://public.example/x", {
      allowPrivateNetwork: false,
      resolve,
    });
    expect(result).toEqual({
      ok: true,
      url: new URL("https://public.example/x"),
      addresses: dns["public.example"]!,
    });
  });

  test("the system resolver is used by default (localhost resolves to loopback)", async () => {
    expect((await checkPublicOrigin("http://localhost:1", { allowPrivateNetwork: true })).ok).toBe(true);
  });
});

describe("the kind of refusal", () => {
  // [url, reason, part of the detail]
  const cases: [string, OriginRefusal["reason"], string][] = [
    // DNS did not answer for a name that may exist: transient.
    ["https://nxdomain.example.com", "unresolvable", "host nxdomain.example.com could not be resolved "],
    ["https://flaky.example.org", "unresolvable", "could not be resolved (EAI_AGAIN)"],
    ["https://slow.example.org/x", "unresolvable", "could not be resolved (ETIMEOUT)"],
    ["https://nodata.example.net", "unresolvable", "could not be resolved (ENOTFOUND)"],
    // Names that cannot exist: never transient.
    ["https://nxdomain.example", "invalid", ".example is a reserved top-level domain"],
    ["https://empty.example", "invalid", "host empty.example has no addresses: .example is a reserved"],
    ["https://a.b.test", "invalid", ".test is a reserved top-level domain"],
    ["https://hidden.onion", "invalid", ".onion is a reserved top-level domain"],
    ["https://intranet", "invalid", "host intranet could not be resolved (ENOTFOUND): a single label"],
    ["https://mastodon.invalid", "invalid", "host mastodon.invalid cannot exist: .invalid is a reserved"],
    ["https://bad_label.example.com", "invalid", "host bad_label.example.com is not a valid DNS host name"],
    [`https://${"a".repeat(64)}.example.com`, "invalid", "is not a valid DNS host name"],
    ["ftp://public.example", "invalid", "must use https://"],
    ["not a url", "invalid", "must be an absolute URL"],
    // Names that exist but must not be called.
    ["https://rebind.example", "blocked", "a loopback address"],
    ["https://10.1.2.3", "blocked", "a private address"],
    ["https://localhost", "blocked", "a loopback name"],
    ["https://evil.localhost", "blocked", "a loopback name"],
  ];
  for (const [url, reason, detail] of cases) {
    const c = { url, reason, detail };
    test(`${c.url} → ${c.reason}`, async () => {
      const result = await checkPublicOrigin(c.url, { allowPrivateNetwork: false, resolve });
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.reason).toBe(c.reason);
      expect(result.detail).toContain(c.detail);
    });
  }

  test("syntactically impossible names and .invalid are refused without a DNS lookup", async () => {
    looked.length = 0;
    const impossible = ["https://mastodon.invalid", "https://bad_label.example.com", "https://a..b.example"];
    for (const url of impossible) {
      const result = await checkPublicOrigin(url, { allowPrivateNetwork: false, resolve });
      expect(result).toMatchObject({ ok: false, reason: "invalid" });
    }
    expect(looked).toEqual([]);
  });
});

describe("originCheckProblem", () => {
  test("an unresolvable host is 503 public_unavailable, retryable after 30 s, pointing at the field", () => {
    const detail = "host a.example.org could not be resolved (EAI_AGAIN)";
    const problem = originCheckProblem({ ok: false, reason: "unresolvable", detail }, "/instance_origin");
    expect(problem).toBeInstanceOf(ProblemError);
    expect(problem).toMatchObject({
      status: 503,
      code: "public_unavailable",
      retryable: true,
      retrySafety: "safe",
      retryAfter: 30,
    });
    expect(problem.errors).toEqual([{ pointer: "/instance_origin", code: "unresolvable", detail }]);
    expect(problem.detail).toBe(`\`instance_origin\` ${detail}; this may be temporary, try again later.`);
  });

  for (const reason of ["invalid", "blocked"] as const) {
    test(`a ${reason} origin is 400 public_invalid_request on the field, not retryable`, () => {
      const refusal = { ok: false, reason, detail: "must use https://" } as const;
      const problem = originCheckProblem(refusal, "/url", "The webhook URL");
      expect(problem).toMatchObject({ status: 400, code: "public_invalid_request", retryable: false });
      expect(problem.retryAfter).toBeNull();
      expect(problem.errors).toEqual([{ pointer: "/url", code: "custom", detail: "must use https://" }]);
      expect(problem.detail).toBe("The webhook URL must use https://.");
    });
  }
});
