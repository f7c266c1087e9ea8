// The contract's webhook URL rules, through the API: every refused form and every private or
// reserved range (IPv4, IPv6, IPv4-mapped), with DNS answered by a stub resolver.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { setWebhookTransport } from "../../src/modules/webhooks/transport.ts";
import { expectProblem } from "../helpers/problems.ts";
import { startTestServer, type TestResponse, type TestServer } from "../helpers/server.ts";
import { createEndpoint } from "./helpers.ts";

/** DNS of the tests: host → addresses; unknown hosts are NXDOMAIN. */
const DNS: Record<string, string[]> = {
  "hooks.example.com": ["93.184.216.34"],
  "v6.example.com": ["2606:4700:4700::1111"],
  "xn--bcher-kva.example": ["93.184.216.35"],
  "mixed.example.com": ["93.184.216.34", "10.0.0.7"],
  "loop.example.com": ["127.0.0.1"],
  localhost: ["127.0.0.1", "::1"],
  "hooks.localhost": ["127.0.0.1"],
};
/** Hosts whose DNS fails for now with this error code (a dead or slow resolver), until removed. */
const DNS_DOWN = new Map<string, string>();
/** Answers DNS; `private-<n>.example.com` resolves to PRIVATE[n]. */
async function stubResolve(host: string): Promise<string[]> {
  const down = DNS_DOWN.get(host);
  if (down) throw Object.assign(new Error("DNS failure"), { code: down });
  const numbered = /^private-(\d+)\.example\.com$/.exec(host);
  if (numbered) return [PRIVATE[Number(numbered[1])]!.address];
  const answer = DNS[host];
  if (!answer) throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
  return answer;
}

/** Private and reserved answers, each with the range the refusal must name. */
const PRIVATE: { address: string; range: string }[] = [
  { address: "127.0.0.1", range: "127.0.0.0/8" },
  { address: "127.255.255.254", range: "127.0.0.0/8" },
  { address: "10.1.2.3", range: "10.0.0.0/8" },
  { address: "172.16.5.4", range: "172.16.0.0/12" },
  { address: "172.31.255.255", range: "172.16.0.0/12" },
  { address: "192.168.1.1", range: "192.168.0.0/16" },
  { address: "169.254.169.254", range: "169.254.0.0/16" },
  { address: "100.64.0.1", range: "100.64.0.0/10" },
  { address: "0.0.0.0", range: "0.0.0.0/8" },
  { address: "192.0.0.8", range: "192.0.0.0/24" },
  { address: "192.0.2.10", range: "192.0.2.0/24" },
  { address: "198.18.0.1", range: "198.18.0.0/15" },
  { address: "198.51.100.7", range: "198.51.100.0/24" },
  { address: "203.0.113.9", range: "203.0.113.0/24" },
  { address: "224.0.0.251", range: "224.0.0.0/4" },
  { address: "240.0.0.1", range: "240.0.0.0/4" },
  { address: "255.255.255.255", range: "255.255.255.255/32" },
  { address: "::1", range: "::1/128" },
  { address: "::", range: "::/128" },
  { address: "fc00::1", range: "fc00::/7" },
  { address: "fd12:3456::1", range: "fc00::/7" },
  { address: "fe80::1", range: "fe80::/10" },
  { address: "fec0::1", range: "fec0::/10" },
  { address: "ff02::1", range: "ff00::/8" },
  { address: "2001:db8::1", range: "2001:db8::/32" },
  { address: "64:ff9b::a00:1", range: "64:ff9b::/96" },
  { address: "::7f00:1", range: "::/96" },
  { address: "::ffff:127.0.0.1", range: "127.0.0.0/8" },
  { address: "::ffff:10.0.0.1", range: "10.0.0.0/8" },
  { address: "::ffff:169.254.169.254", range: "169.254.0.0/16" },
  { address: "::ffff:192.168.0.1", range: "192.168.0.0/16" },
];

let strict: TestServer;
let dev: TestServer;
beforeAll(async () => {
  strict = await startTestServer();
  dev = await startTestServer({ env: { HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1" } });
  setWebhookTransport(strict.herald, { resolve: stubResolve });
  setWebhookTransport(dev.herald, { resolve: stubResolve });
});
afterAll(async () => {
  await strict.stop();
  await dev.stop();
});

const body = (url: string) => ({ name: "Rules", url, event_types: ["post.published"] });

async function expectRefused(s: TestServer, url: string, detail: string | RegExp): Promise<void> {
  const r = await createEndpoint(s, body(url));
  expectProblem(r, 400, "public_invalid_request", ["/url"]);
  if (typeof detail === "string") expect(r.body.errors[0].detail).toContain(detail);
  else expect(r.body.errors[0].detail).toMatch(detail);
}

describe("refused forms (without the test switch)", () => {
  const cases: { name: string; url: string; detail: string | RegExp }[] = [
    { name: "http://", url: "http://hooks.example.com/x", detail: "must use https://, not http://" },
    { name: "another scheme", url: "ftp://hooks.example.com/x", detail: "must use https://, not ftp://" },
    { name: "a relative URL", url: "hooks.example.com/x", detail: "must be an absolute URL" },
    {
      name: "a port other than 443",
      url: "https://hooks.example.com:8443/x",
      detail: "must use port 443, not 8443",
    },
    { name: "port 80 on https", url: "https://hooks.example.com:80/x", detail: "must use port 443, not 80" },
    {
      name: "a user name and password",
      url: "https://user:secret@hooks.example.com/x",
      detail: "must not contain a user name or password",
    },
    {
      name: "a user name alone",
      url: "https://user@hooks.example.com/x",
      detail: "must not contain a user name or password",
    },
    {
      name: "an IPv4 literal",
      url: "https://93.184.216.34/x",
      detail: "must name its host with a DNS name, not an IP address (93.184.216.34)",
    },
    {
      name: "an IPv6 literal",
      url: "https://[2606:4700:4700::1111]/x",
      detail: "not an IP address (2606:4700:4700::1111)",
    },
    { name: "a loopback literal", url: "https://127.0.0.1/x", detail: "not an IP address (127.0.0.1)" },
    {
      name: "an IPv4 literal in hex (the parser's 127.0.0.1)",
      url: "https://0x7f000001/x",
      detail: "not an IP address (127.0.0.1)",
    },
    {
      name: "an IPv4 literal as one decimal number",
      url: "https://2130706433/x",
      detail: "not an IP address (127.0.0.1)",
    },
    { name: "an IPv4-mapped IPv6 literal", url: "https://[::ffff:127.0.0.1]/x", detail: "not an IP address" },
    { name: "a single-label host", url: "https://intranet/x", detail: "fully qualified host" },
    { name: "localhost", url: "https://localhost/x", detail: "fully qualified host" },
    { name: "a .localhost name", url: "https://hooks.localhost/x", detail: "loopback name" },
    {
      name: "an underscore in the host",
      url: "https://bad_label.example.com/x",
      detail: "not a valid DNS host name",
    },
    {
      name: "a space",
      url: "https://hooks.example.com/a b",
      detail: "must not contain spaces or control characters",
    },
    {
      name: "a newline the parser would drop",
      url: "https://hooks.exa\nmple.com/x",
      detail: "must not contain spaces or control characters",
    },
    {
      name: "a host under .invalid (never looked up)",
      url: "https://hooks.example.invalid/x",
      detail: /cannot exist: \.invalid is a reserved/,
    },
    {
      name: "an unresolvable host under .test",
      url: "https://nowhere.test/x",
      detail: "could not be resolved (ENOTFOUND): .test is a reserved",
    },
    { name: "an unresolvable host in .example", url: "https://gone.example/", detail: ".example is a" },
    { name: "an unresolvable host under .onion", url: "https://abc.onion/x", detail: ".onion is a reserved" },
    {
      name: "a host with one private address among public ones",
      url: "https://mixed.example.com/x",
      detail: "resolves to 10.0.0.7, a private address (10.0.0.0/8)",
    },
    {
      name: "a host resolving to 127.0.0.1",
      url: "https://loop.example.com/x",
      detail: "resolves to 127.0.0.1, a loopback address (127.0.0.0/8)",
    },
  ];
  for (const c of cases) test(c.name, () => expectRefused(strict, c.url, c.detail));

  test("more than 2048 characters", async () => {
    const url = `https://hooks.example.com/${"x".repeat(2048 - 26 + 1)}`;
    expect(url.length).toBe(2049);
    const r = await createEndpoint(strict, body(url));
    expectProblem(r, 400, "public_invalid_request", ["/url"]);
    expect(r.body.errors[0].detail).toBe("must be at most 2048 characters");
  });

  test("exactly 2048 characters is accepted", async () => {
    const url = `https://hooks.example.com/${"x".repeat(2048 - 26)}`;
    expect(url.length).toBe(2048);
    expect((await createEndpoint(strict, body(url))).status).toBe(201);
  });
});

describe("a host that does not resolve right now is 503, retryable", () => {
  /** The full transient-DNS problem on `/url`, with its Retry-After. */
  function expectUnavailable(r: TestResponse, host: string, code: string): void {
    expectProblem(r, 503, "public_unavailable", ["/url"]);
    expect(r.headers.get("retry-after")).toBe("30");
    expect(r.body).toMatchObject({ retryable: true, retry: { safety: "safe", after: 30 } });
    expect(r.body.user_action).toBe("retry_later");
    const detail = `host ${host} could not be resolved (${code})`;
    expect(r.body.errors[0]).toEqual({ pointer: "/url", code: "unresolvable", detail });
    expect(r.body.detail).toStartWith(`The webhook URL ${detail}`);
  }

  test("NXDOMAIN for a name under a public TLD", async () => {
    const r = await createEndpoint(strict, body("https://nowhere.example.com/x"));
    expectUnavailable(r, "nowhere.example.com", "ENOTFOUND");
  });

  for (const code of ["EAI_AGAIN", "ESERVFAIL", "ETIMEOUT"]) {
    test(`a resolver failure (${code})`, async () => {
      DNS_DOWN.set("flaky.example.org", code);
      try {
        const r = await createEndpoint(strict, body("https://flaky.example.org/x"));
        expectUnavailable(r, "flaky.example.org", code);
      } finally {
        DNS_DOWN.delete("flaky.example.org");
      }
    });
  }

  test("the same under the test switch, and on PATCH", async () => {
    DNS_DOWN.set("hooks.example.com", "EAI_AGAIN");
    try {
      const r = await createEndpoint(dev, body("https://hooks.example.com/x"));
      expectUnavailable(r, "hooks.example.com", "EAI_AGAIN");
      const created = await createEndpoint(strict, body("https://v6.example.com/a"));
      expect(created.status).toBe(201);
      const path = `/v1/workspaces/${strict.owner.workspaceId}/webhook-endpoints/${created.body.id}`;
      const patched = await strict.request("PATCH", path, { body: { url: "https://hooks.example.com/b" } });
      expectUnavailable(patched, "hooks.example.com", "EAI_AGAIN");
    } finally {
      DNS_DOWN.delete("hooks.example.com");
    }
  });

  test("once DNS answers, the same request with the same Idempotency-Key succeeds", async () => {
    const headers = { "idempotency-key": `dns-retry-${Date.now()}` };
    const path = `/v1/workspaces/${strict.owner.workspaceId}/webhook-endpoints`;
    const url = "https://hooks.example.com/retry";
    const send = () => strict.request("POST", path, { body: body(url), headers });
    DNS_DOWN.set("hooks.example.com", "ETIMEOUT");
    try {
      expect((await send()).status).toBe(503);
    } finally {
      DNS_DOWN.delete("hooks.example.com");
    }
    const retried = await send();
    expect(retried.status).toBe(201);
    expect(retried.body.url).toBe("https://hooks.example.com/retry");
  });
});

describe("every private or reserved answer is refused", () => {
  PRIVATE.forEach((p, i) => {
    test(`${p.address} (${p.range})`, async () => {
      await expectRefused(strict, `https://private-${i}.example.com/hook`, `resolves to ${p.address}, a`);
      const r = await createEndpoint(strict, body(`https://private-${i}.example.com/hook`));
      expect(r.body.errors[0].detail).toContain(`(${p.range})`);
    });
  });
});

describe("accepted forms", () => {
  const cases: { name: string; url: string; stored: string }[] = [
    {
      name: "a public host",
      url: "https://hooks.example.com/herald?x=1",
      stored: "https://hooks.example.com/herald?x=1",
    },
    {
      name: "an explicit :443 (dropped)",
      url: "https://hooks.example.com:443/h",
      stored: "https://hooks.example.com/h",
    },
    {
      name: "upper case and a trailing dot",
      url: "https://HOOKS.Example.com./h",
      stored: "https://hooks.example.com./h",
    },
    {
      name: "a host with IPv6 addresses only",
      url: "https://v6.example.com/h",
      stored: "https://v6.example.com/h",
    },
    {
      name: "an international domain name (punycode)",
      url: "https://bücher.example/h",
      stored: "https://xn--bcher-kva.example/h",
    },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const r = await createEndpoint(strict, body(c.url));
      expect(r.status).toBe(201);
      expect(r.body.url).toBe(c.stored);
    });
  }

  test("the same rules apply when a PATCH changes the URL", async () => {
    const created = await createEndpoint(strict, body("https://hooks.example.com/a"));
    const path = `/v1/workspaces/${strict.owner.workspaceId}/webhook-endpoints/${created.body.id}`;
    const refused = await strict.request("PATCH", path, { body: { url: "https://loop.example.com/a" } });
    expectProblem(refused, 400, "public_invalid_request", ["/url"]);
    expect(refused.body.errors[0].detail).toContain("loopback");
    const ok = await strict.request("PATCH", path, { body: { url: "https://v6.example.com/b" } });
    expect(ok.status).toBe(200);
    expect(ok.body.url).toBe("https://v6.example.com/b");
  });
});

describe("HERALD_DEV_ALLOW_PRIVATE_NETWORK=1 admits http:// loopback, any port, and nothing else", () => {
  const admitted = [
    "http://127.0.0.1:8080/hooks",
    "http://127.0.0.1/hooks",
    "http://[::1]:9000/hooks",
    "http://localhost:3000/hooks",
    "http://hooks.localhost:3000/hooks",
  ];
  for (const url of admitted) {
    test(`admits ${url}`, async () => {
      const r = await createEndpoint(dev, body(url));
      expect({ status: r.status, detail: r.body.errors?.[0]?.detail }).toEqual({
        status: 201,
        detail: undefined,
      });
    });
  }

  const refused: { url: string; detail: string }[] = [
    { url: "http://10.0.0.1:8080/hooks", detail: "private address" },
    { url: "http://192.168.1.10/hooks", detail: "private address" },
    { url: "http://[fe80::1]:8080/hooks", detail: "link-local" },
    { url: "http://hooks.example.com/hooks", detail: "http:// is only admitted for loopback hosts" },
    { url: "http://user:pw@127.0.0.1:8080/hooks", detail: "must not contain a user name or password" },
    { url: "https://loop.example.com/hooks", detail: "resolves to 127.0.0.1, a loopback address" },
    { url: "https://127.0.0.1/hooks", detail: "not an IP address" },
    { url: "https://hooks.example.com:8443/hooks", detail: "must use port 443" },
    { url: "ftp://127.0.0.1/hooks", detail: "must use https://, not ftp://" },
  ];
  for (const c of refused) test(`refuses ${c.url}`, () => expectRefused(dev, c.url, c.detail));
});
