// The complete example of sdk/README.md, run as it is printed against a real server (only the package
// name is pointed at the sources): it schedules a post and pages through the schedule, and its webhook
// handler accepts a real delivery and refuses a tampered one.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startPostsWorld, type PostsWorld } from "../posts/helpers.ts";
import { mustCreateEndpoint, runWebhooks, startReceiver, type Receiver } from "../webhooks/helpers.ts";

const root = join(import.meta.dir, "..", "..");
const dir = join(root, "test-artifacts", `sdk-readme-${process.pid}`);

let w: PostsWorld;
let receiver: Receiver;
/** The variables the example reads; put back as they were afterwards (the CLI's tests read HERALD_API_KEY). */
const EXAMPLE_ENV = ["HERALD_URL", "HERALD_API_KEY", "HERALD_WEBHOOK_SECRETS"] as const;
const savedEnv = EXAMPLE_ENV.map((name) => [name, process.env[name]] as const);

beforeAll(async () => {
  w = await startPostsWorld();
  // The example reads the real clock (its schedule, the webhook's timestamp check): so does the server.
  w.s.clock.set(Date.now());
  receiver = startReceiver();
});
afterAll(async () => {
  for (const [name, value] of savedEnv) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  await receiver.stop();
  await w.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("the README's example runs as printed", async () => {
  const readme = readFileSync(join(root, "sdk", "README.md"), "utf8");
  const code = /<!-- sdk-example -->\s*```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  expect(code).toBeDefined();
  const sdk = join(root, "sdk", "src", "index.ts");
  expect(code).toContain(`from "@herald/client"`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "example.ts"),
    code!.replace(`from "@herald/client"`, `from ${JSON.stringify(sdk)}`),
  );

  const endpoint = await mustCreateEndpoint(w.s, { url: receiver.url });
  process.env.HERALD_URL = w.s.url;
  process.env.HERALD_API_KEY = w.s.owner.apiKey;
  process.env.HERALD_WEBHOOK_SECRETS = `whsec_an_older_one,${endpoint.secret}`;
  const printed: unknown[][] = [];
  const log = console.log;
  console.log = (...args: unknown[]) => void printed.push(args);
  let example: { handleHeraldWebhook(request: Request): Promise<Response> };
  try {
    example = await import(join(dir, "example.ts"));
  } finally {
    console.log = log;
  }

  // It scheduled one post in group "launch" and listed it among the scheduled ones.
  const listed = await w.s.request("GET", `/v1/workspaces/${w.ws}/posts?group=launch`);
  expect(listed.body.data).toHaveLength(1);
  const post = listed.body.data[0];
  expect(post).toMatchObject({ state: "scheduled", destination_id: w.destinationId });
  expect(printed[0]).toEqual(["scheduled", [`${post.id} at ${post.scheduled_at}`]]);
  expect(printed.slice(1)).toContainEqual([post.id, "mastodon", post.scheduled_at]);

  // Its handler takes a real delivery, and refuses the same delivery with a changed body.
  await w.s.request("POST", `/v1/workspaces/${w.ws}/webhook-endpoints/${endpoint.id}/test`, {
    body: {},
    headers: { "idempotency-key": "readme-test-event" },
  });
  await runWebhooks(w.s.server);
  const delivery = receiver.received[0]!;
  const deliver = (body: string) =>
    example.handleHeraldWebhook(
      new Request("http://receiver/herald", { method: "POST", headers: delivery.headers, body }),
    );
  expect((await deliver(delivery.raw)).status).toBe(204);
  const tampered = await deliver(delivery.raw.replace("webhook.test", "post.published"));
  expect(tampered.status).toBe(400);
  expect(await tampered.text()).toBe("signature_mismatch");
});
