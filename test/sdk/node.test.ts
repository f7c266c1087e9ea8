// The package as npm packs it (sdk/tsconfig.build.json, what `npm pack` builds) runs in Node: a typed
// call and a write against a real server, and verifyWebhook on a real delivery, in a `node` child.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { mustCreateEndpoint, runWebhooks, startReceiver, type Receiver } from "../webhooks/helpers.ts";

const root = join(import.meta.dir, "..", "..");
// Inside the repository, so that Node finds openapi-fetch in its node_modules.
const outDir = join(root, "test-artifacts", `sdk-node-${process.pid}`);

let s: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  s = await startTestServer({ env: { HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1" } });
  receiver = startReceiver();
});
afterAll(async () => {
  await receiver.stop();
  await s.stop();
  rmSync(outDir, { recursive: true, force: true });
});

const NODE_SCRIPT = `
import { createHeraldClient, verifyWebhook, WebhookVerificationError } from "./index.js";
const input = JSON.parse(process.env.SDK_INPUT);
const client = createHeraldClient({ baseUrl: input.origin, apiKey: input.apiKey });
const workspaces = await client.GET("/workspaces");
const draft = await client.POST("/workspaces/{workspace_id}/posts", {
  params: { path: { workspace_id: input.workspaceId } },
  body: { when: "draft", group: "from-node", posts: [{ channel: "mastodon", body: ["from Node"] }] },
});
const event = await verifyWebhook({ secrets: [input.secret], headers: input.headers, body: input.body, now: input.now });
let tampered = null;
try {
  await verifyWebhook({ secrets: [input.secret], headers: input.headers, body: input.body + " ", now: input.now });
} catch (error) {
  tampered = error instanceof WebhookVerificationError ? error.reason : String(error);
}
console.log(JSON.stringify({
  node: process.version,
  workspaces: workspaces.data.data.map((w) => w.id),
  draftStatus: draft.response.status,
  eventType: event.type,
  tampered,
}));
`;

test("the built package works in Node", async () => {
  const build = Bun.spawnSync(
    [
      join(root, "node_modules", ".bin", "tsc"),
      "-p",
      join(root, "sdk", "tsconfig.build.json"),
      "--outDir",
      outDir,
    ],
    { stderr: "pipe", stdout: "pipe" },
  );
  expect(build.stdout.toString() + build.stderr.toString()).toBe("");
  expect(build.exitCode).toBe(0);
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, "run.mjs"), NODE_SCRIPT);

  const endpoint = await mustCreateEndpoint(s, { url: receiver.url });
  const sent = await s.request(
    "POST",
    `/v1/workspaces/${s.owner.workspaceId}/webhook-endpoints/${endpoint.id}/test`,
    {
      body: {},
      headers: { "idempotency-key": "node-test-event" },
    },
  );
  expect(sent.status).toBeLessThan(300);
  await runWebhooks(s.server);
  const delivery = receiver.received[0]!;

  const input = {
    origin: s.url,
    apiKey: s.owner.apiKey,
    workspaceId: s.owner.workspaceId,
    secret: endpoint.secret,
    headers: delivery.headers,
    body: delivery.raw,
    now: s.clock.now(),
  };
  const child = Bun.spawn(["node", join(outDir, "run.mjs")], {
    env: { ...process.env, SDK_INPUT: JSON.stringify(input) },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
  const result = JSON.parse(stdout);
  expect(result).toMatchObject({
    workspaces: [s.owner.workspaceId],
    draftStatus: 201,
    eventType: "webhook.test",
    tampered: "signature_mismatch",
  });
  expect(Number(/^v(\d+)/.exec(result.node)![1])).toBeGreaterThanOrEqual(20);
}, 120_000);
