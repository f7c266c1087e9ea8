// The verifier printed in docs/webhooks.md, run as it is printed against real deliveries: valid
// ones pass, during a rotation with either secret; tampered, stale and future ones do not.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { endpointsPath, mustCreateEndpoint, runWebhooks, startReceiver, type Receiver } from "./helpers.ts";

type Verify = (rawBody: string, header: string | null, secrets: string[], nowMs?: number) => any;

let s: TestServer;
let receiver: Receiver;
let verify: Verify;
let dir: string;

beforeAll(async () => {
  const doc = readFileSync(join(import.meta.dir, "..", "..", "docs", "webhooks.md"), "utf8");
  const code = /<!-- verify-example -->\s*```ts\n([\s\S]*?)```/.exec(doc)?.[1];
  expect(code).toBeDefined();
  dir = mkdtempSync(join(tmpdir(), "herald-docs-"));
  writeFileSync(join(dir, "verify.ts"), code!);
  verify = (await import(join(dir, "verify.ts"))).verifyHeraldEvent;
  s = await startTestServer({ env: { HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1" } });
  receiver = startReceiver();
});
afterAll(async () => {
  await s.stop();
  await receiver.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("the documented verifier accepts real deliveries and rejects what it should", async () => {
  const endpoint = await mustCreateEndpoint(s, { url: receiver.url });
  const path = `${endpointsPath(s.owner.workspaceId)}/${endpoint.id}`;
  await s.request("POST", `${path}/test`, { body: {} });
  await runWebhooks(s.server);
  const got = receiver.received[0]!;
  const header = got.headers["service-signature"]!;
  const now = s.clock.now();

  expect(verify(got.raw, header, [endpoint.secret], now)).toMatchObject({
    type: "webhook.test",
    id: got.headers["service-event-id"],
  });
  expect(() => verify(got.raw, header, ["whsec_other"], now)).toThrow("no signature matches");
  expect(() =>
    verify(got.raw.replace("webhook.test", "webhook.tesT"), header, [endpoint.secret], now),
  ).toThrow("no signature matches");
  expect(() => verify(got.raw, null, [endpoint.secret], now)).toThrow("missing Service-Signature");
  expect(() => verify(got.raw, "v1=abc", [endpoint.secret], now)).toThrow("malformed Service-Signature");
  // Five minutes either way is accepted; a second more is not.
  expect(verify(got.raw, header, [endpoint.secret], now + 300_000)).toBeDefined();
  expect(verify(got.raw, header, [endpoint.secret], now - 300_000)).toBeDefined();
  expect(() => verify(got.raw, header, [endpoint.secret], now + 301_000)).toThrow(
    "timestamp older than 5 minutes",
  );
  expect(() => verify(got.raw, header, [endpoint.secret], now - 301_000)).toThrow(
    "timestamp more than 5 minutes in the future",
  );

  const rotated = await s.request("POST", `${path}/rotate-secret`, { body: {} });
  await s.request("POST", `${path}/test`, { body: {} });
  await runWebhooks(s.server);
  const during = receiver.received[1]!;
  expect(verify(during.raw, during.headers["service-signature"]!, [endpoint.secret], now)).toBeDefined();
  expect(verify(during.raw, during.headers["service-signature"]!, [rotated.body.secret], now)).toBeDefined();
  expect(
    verify(during.raw, during.headers["service-signature"]!, ["whsec_unrelated", rotated.body.secret], now),
  ).toBeDefined();
});
