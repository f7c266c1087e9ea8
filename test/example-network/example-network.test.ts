// The proof that a network is its folder: Example Social (this folder: its adapter and its fake) is
// registered beside the nine when the server is built, and a person connects it on the dashboard,
// publishes a thread with an image through the API, reads its numbers and sees its options on the
// compose page, with nothing of it in src/.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { NETWORKS } from "../../src/providers/registry.ts";
import { completeBody, planUpload, sendAllParts, uploadBody } from "../assets/helpers.ts";
import { dashboardWorld, type DashboardWorld, type TestBrowser } from "../dashboard/support.ts";
import { attributeOf, formOf, screenOf } from "../helpers/screen.ts";
import { idem } from "../posts/helpers.ts";
import { makePng } from "../providers/support.ts";
import { EXAMPLE_NETWORK } from "./adapter.ts";
import { startExampleFake, type ExampleFake } from "./fake.ts";

let world: DashboardWorld;
let fake: ExampleFake;
let owner: TestBrowser;
let ws: string;
let destinationId: string;

const v1 = (
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
) => world.s.request(method, `/v1/workspaces/${ws}${path}`, { key: world.owner.apiKey, ...options });

beforeAll(async () => {
  fake = await startExampleFake();
  world = await dashboardWorld({
    networks: [...NETWORKS, EXAMPLE_NETWORK],
    // Its API origin is an operator setting like any network's (HERALD_<CH>_API_BASE).
    env: { HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1", HERALD_EXAMPLE_API_BASE: fake.origin },
  });
  ws = world.owner.workspaceId;
  owner = await world.signedIn();
});
afterAll(async () => {
  await world.stop();
  await fake.stop();
});

describe("a network registered from outside src/", () => {
  test("a person connects it with the form its connection kind gives", async () => {
    const page = `/dashboard/workspaces/${ws}/destinations`;
    const listed = screenOf((await owner.get(page)).text);
    const connect = listed.getByRole("button", { name: "Connect Example Social" });
    const form = listed.within(formOf(connect)!);
    expect(listed.descriptionOf(form.getByLabelText(/Handle/))).toContain("Like ada.example.");
    const connected = await owner.submit(
      page,
      { handle: "ada.example", app_password: "ada-app-pass" },
      `${page}/connect/example`,
    );
    expect(connected.status).toBe(303);
    expect(connected.location).toContain("notice=connected");
    const destinations = await v1("GET", "/destinations");
    const example = destinations.body.data.find((d: { channel: string }) => d.channel === "example");
    expect(example).toMatchObject({ display_name: "Ada Example", status: "ready" });
    destinationId = example.id;
  });

  test("a thread with an image is published as a post and a reply, the image uploaded first", async () => {
    const plan = await planUpload(makePng({ width: 8, height: 6 }));
    const started = await v1("POST", "/asset-uploads", {
      body: uploadBody(plan, { fileName: "chart.png" }),
      headers: idem(),
    });
    expect(started.status).toBe(201);
    const etags = await sendAllParts(started.body, plan);
    const asset = await v1("POST", `/asset-uploads/${started.body.id}/complete`, {
      body: completeBody(plan, etags),
      headers: idem(),
    });
    expect(asset.status).toBe(200);

    const created = await v1("POST", "/posts", {
      headers: idem(),
      body: {
        when: "now",
        confirmed: true,
        group: "example-thread",
        posts: [
          {
            destination_id: destinationId,
            body: ["Hello from Herald", "And a reply"],
            media_items: [{ asset_id: asset.body.id, item_index: 0 }],
          },
        ],
      },
    });
    expect({ status: created.status, text: created.text }).toMatchObject({ status: 202 });
    await world.s.server.engine.runUntilIdle();
    const post = await v1("GET", `/posts/${created.body.posts[0].id}`);
    expect(post.body.state).toBe("published");

    expect(fake.media).toEqual([
      { id: "media-1", contentType: "image/png", bytes: plan.byteSize, altText: "" },
    ]);
    expect(fake.posts.map(({ text, mediaIds, replyTo }) => ({ text, mediaIds, replyTo }))).toEqual([
      { text: "Hello from Herald", mediaIds: ["media-1"], replyTo: null },
      { text: "And a reply", mediaIds: [], replyTo: "post-1" },
    ]);
  });

  test("its numbers are read by the analytics job", async () => {
    fake.posts[0]!.stats = { views: 120, likes: 9, replies: 2 };
    world.s.clock.advance(10 * 60_000);
    await world.s.server.scheduler.runNow("analytics-refresh");
    const r = await v1("GET", "/analytics/post-groups/example-thread");
    expect(r.status).toBe(200);
    expect(r.body.posts[0]).toMatchObject({
      channel: "example",
      state: "fresh",
      metrics: { views: 120, reactions: 9, comments: 2 },
    });
  });

  test("the compose page shows its options, read from its schema", async () => {
    const page = `/dashboard/workspaces/${ws}/posts/new`;
    const r = await owner.submit(
      page,
      { destination_ids: destinationId, item_count: "1", item_0_text: "Draft", when: "draft", op: "add" },
      page,
    );
    expect(r.status).toBe(200);
    const screen = screenOf(r.text);
    const group = screen.getByRole("group", { name: "Example Social" });
    const options = screen.within(group);
    expect(options.text()).toContain("Example Social shows the first image large.");
    const audience = options.getByRole("combobox", { name: "Audience" });
    expect(options.within(audience).namesOf("option")).toEqual(
      expect.arrayContaining(["Everyone", "Followers only"]),
    );
    const sensitive = options.getByRole("checkbox", { name: "Mark as sensitive" });
    expect(attributeOf(sensitive, "name")).toBe("opt_example_sensitive");
    const topic = options.getByRole("textbox", { name: "Topic" });
    expect(screen.descriptionOf(topic)).toContain("One word the post is filed under.");
  });
});
