// What counts as delivered, and the SSRF guard at delivery time: the host is resolved once per
// attempt, private answers are refused without connecting, and the request goes to the checked
// address with the URL's Host (and, over TLS, its server name and certificate check).
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { sendToAddress } from "../../src/modules/webhooks/deliver.ts";
import {
  DELIVERY_TIMEOUT_MS,
  setWebhookTransport,
  webhookTransport,
  type WebhookTransport,
} from "../../src/modules/webhooks/transport.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import {
  deliveriesOf,
  endpointsPath,
  mustCreateEndpoint,
  runWebhooks,
  startReceiver,
  verifies,
  type Receiver,
} from "./helpers.ts";

let s: TestServer;
let receiver: Receiver;
let elsewhere: Receiver;
/** DNS of the tests, changeable per test. */
const dns: Record<string, string[]> = {};
const lookups: string[] = [];
const fetched: { url: string; host: string | null }[] = [];

beforeAll(async () => {
  s = await startTestServer({ env: { HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1" } });
  receiver = startReceiver();
  elsewhere = startReceiver();
});
afterAll(async () => {
  await s.stop();
  await receiver.stop();
  await elsewhere.stop();
});
beforeEach(async () => {
  const list = await s.request("GET", `${endpointsPath(s.owner.workspaceId)}?limit=100`);
  for (const e of list.body.data) await s.request("DELETE", `${endpointsPath(s.owner.workspaceId)}/${e.id}`);
  for (const r of [receiver, elsewhere]) {
    r.received.length = 0;
    r.statuses.length = 0;
    r.defaultStatus = 200;
    r.delayMs = 0;
    r.headers = {};
  }
  for (const k of Object.keys(dns)) delete dns[k];
  lookups.length = 0;
  fetched.length = 0;
  setWebhookTransport(s.herald, {
    timeoutMs: DELIVERY_TIMEOUT_MS,
    resolve: async (host) => {
      lookups.push(host);
      if (!dns[host]) throw Object.assign(new Error("nx"), { code: "ENOTFOUND" });
      return dns[host]!;
    },
    fetch: (url, init) => {
      fetched.push({ url, host: new Headers(init.headers).get("host") });
      return fetch(url, init);
    },
  });
});

/** Queues a test event for an endpoint and runs the jobs; returns the delivery as the log shows it. */
async function sendTest(endpointId: string): Promise<any> {
  const queued = await s.request("POST", `${endpointsPath(s.owner.workspaceId)}/${endpointId}/test`, {
    body: {},
  });
  expect(queued.status).toBe(202);
  await runWebhooks(s.server);
  return (await deliveriesOf(s, endpointId)).find((d) => d.id === queued.body.id);
}

describe("the receiver's answer", () => {
  const cases: { status: number; delivered: boolean; error: string | null }[] = [
    { status: 200, delivered: true, error: null },
    { status: 201, delivered: true, error: null },
    { status: 202, delivered: true, error: null },
    { status: 204, delivered: true, error: null },
    { status: 299, delivered: true, error: null },
    { status: 301, delivered: false, error: "HTTP 301: redirects are not followed" },
    { status: 302, delivered: false, error: "HTTP 302: redirects are not followed" },
    { status: 307, delivered: false, error: "HTTP 307: redirects are not followed" },
    { status: 308, delivered: false, error: "HTTP 308: redirects are not followed" },
    { status: 400, delivered: false, error: "HTTP 400" },
    { status: 404, delivered: false, error: "HTTP 404" },
    { status: 410, delivered: false, error: "HTTP 410" },
    { status: 429, delivered: false, error: "HTTP 429" },
    { status: 500, delivered: false, error: "HTTP 500" },
    { status: 503, delivered: false, error: "HTTP 503" },
  ];
  for (const c of cases) {
    test(`${c.status} is ${c.delivered ? "delivered" : "a failure"}`, async () => {
      const endpoint = await mustCreateEndpoint(s, { url: receiver.url });
      receiver.statuses.push(c.status);
      receiver.headers = c.status >= 300 && c.status < 400 ? { location: elsewhere.url } : {};
      const d = await sendTest(endpoint.id);
      expect(d).toMatchObject({
        status: c.delivered ? "succeeded" : "pending",
        attempt_count: 1,
        last_response_status: c.status,
        last_error: c.error,
      });
      expect(receiver.received).toHaveLength(1);
      expect(elsewhere.received).toHaveLength(0); // a redirect is never followed
    });
  }

  test("no answer within the time limit is a failure", async () => {
    setWebhookTransport(s.herald, { timeoutMs: 200 });
    const endpoint = await mustCreateEndpoint(s, { url: receiver.url });
    receiver.delayMs = 1500;
    const d = await sendTest(endpoint.id);
    expect(d).toMatchObject({
      status: "pending",
      last_response_status: null,
      last_error: "timed out after 0.2 s",
    });
    expect(d.last_duration_ms).toBeLessThan(1500);
    expect(webhookTransport(s.herald).timeoutMs).toBe(200);
    expect(DELIVERY_TIMEOUT_MS).toBe(10_000);
  });

  test("a refused connection is a failure", async () => {
    const closed = startReceiver();
    await closed.stop();
    const endpoint = await mustCreateEndpoint(s, { url: closed.url });
    const d = await sendTest(endpoint.id);
    expect(d).toMatchObject({ status: "pending", last_response_status: null });
    expect(d.last_error).toStartWith("connection failed (");
  });
});

describe("SSRF at delivery time", () => {
  test("DNS that changed to a private address after creation: refused, nothing is sent", async () => {
    dns["hooks.example.com"] = ["93.184.216.34"];
    const endpoint = await mustCreateEndpoint(s, { url: "https://hooks.example.com/herald" });
    dns["hooks.example.com"] = ["10.0.0.5"];
    lookups.length = 0;
    const d = await sendTest(endpoint.id);
    expect(d).toMatchObject({
      status: "pending",
      last_response_status: null,
      last_error:
        "not sent: the URL host hooks.example.com resolves to 10.0.0.5, a private address (10.0.0.0/8)",
    });
    expect(fetched).toHaveLength(0);
    expect(lookups).toEqual(["hooks.example.com"]);
  });

  test("the request goes to the address that was checked, with the URL's Host; one resolution per attempt", async () => {
    dns["hooks.localhost"] = ["127.0.0.1"];
    const endpoint = await mustCreateEndpoint(s, {
      url: `http://hooks.localhost:${receiver.port}/hooks?x=1`,
    });
    lookups.length = 0;
    const d = await sendTest(endpoint.id);
    expect(d.status).toBe("succeeded");
    expect(lookups).toEqual(["hooks.localhost"]);
    expect(fetched).toEqual([
      { url: `http://127.0.0.1:${receiver.port}/hooks?x=1`, host: `hooks.localhost:${receiver.port}` },
    ]);
    expect(receiver.received[0]!.headers.host).toBe(`hooks.localhost:${receiver.port}`);
    expect(receiver.received[0]!.path).toBe("/hooks");
    expect(await verifies(receiver.received[0]!, endpoint.secret, s.clock.now())).toBe(true);
  });

  test("when the first checked address refuses the connection, the next checked one is used", async () => {
    // The receiver listens on 127.0.0.1 only; ::1 refuses.
    dns["hooks.localhost"] = ["::1", "127.0.0.1"];
    const endpoint = await mustCreateEndpoint(s, { url: `http://hooks.localhost:${receiver.port}/hooks` });
    const d = await sendTest(endpoint.id);
    expect(d.status).toBe("succeeded");
    expect(fetched.map((f) => f.url)).toEqual([
      `http://[::1]:${receiver.port}/hooks`,
      `http://127.0.0.1:${receiver.port}/hooks`,
    ]);
  });

  test("a loopback name that now resolves to a public address is refused (http:// stays loopback-only)", async () => {
    dns["hooks.localhost"] = ["127.0.0.1"];
    const endpoint = await mustCreateEndpoint(s, { url: `http://hooks.localhost:${receiver.port}/hooks` });
    dns["hooks.localhost"] = ["93.184.216.34"];
    const d = await sendTest(endpoint.id);
    expect(d.last_error).toStartWith("not sent: the URL host hooks.localhost resolves to 93.184.216.34");
    expect(fetched).toHaveLength(0);
  });
});

describe("TLS to a checked address", () => {
  const cert = readFileSync(join(import.meta.dir, "tls", "hooks.example.crt"), "utf8");
  const key = readFileSync(join(import.meta.dir, "tls", "hooks.example.key"), "utf8");
  let tls: ReturnType<typeof Bun.serve>;
  const seen: { host: string | null; body: string }[] = [];
  beforeAll(() => {
    tls = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      tls: { cert, key },
      fetch: async (r) => {
        seen.push({ host: r.headers.get("host"), body: await r.text() });
        return new Response("ok");
      },
    });
  });
  afterAll(async () => {
    await tls.stop(true);
  });

  const transport = (extra: Partial<WebhookTransport> = {}): WebhookTransport => ({
    fetch: (u, i) => fetch(u, i),
    timeoutMs: 5000,
    random: Math.random,
    ca: [cert],
    ...extra,
  });
  const request = { url: "", body: '{"hello":"tls"}', headers: { "content-type": "application/json" } };

  test("connects to the IP, sends the host name as SNI and Host, and checks the certificate against the host name", async () => {
    const url = new URL(`https://hooks.example:${tls.port}/in`);
    const result = await sendToAddress(transport(), url, "127.0.0.1", request, AbortSignal.timeout(5000));
    expect(result).toEqual({ status: 200, error: null, connectFailed: false });
    expect(seen.at(-1)).toEqual({ host: `hooks.example:${tls.port}`, body: '{"hello":"tls"}' });
  });

  test("a certificate for another name is refused, although the address is the same", async () => {
    const before = seen.length;
    const result = await sendToAddress(
      transport(),
      new URL(`https://other.example:${tls.port}/in`),
      "127.0.0.1",
      request,
      AbortSignal.timeout(5000),
    );
    expect(result.status).toBeNull();
    expect(result.error).toBe("connection failed (ERR_TLS_CERT_ALTNAME_INVALID)");
    expect(seen).toHaveLength(before);
  });

  test("an untrusted certificate is refused", async () => {
    const result = await sendToAddress(
      transport({ ca: undefined }),
      new URL(`https://hooks.example:${tls.port}/in`),
      "127.0.0.1",
      request,
      AbortSignal.timeout(5000),
    );
    expect(result.status).toBeNull();
    expect(result.error).toMatch(/^connection failed \(.*(SELF_SIGNED|CERT).*\)$/);
  });
});
