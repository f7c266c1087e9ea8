// The command line and tracked links (issue 31): `herald posts create --no-link-tracking` opts a
// post out, and `herald posts get` shows a post's short links with their clicks.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { herald, removeTempDirs, succeeded, tempDir } from "../cli/helpers.ts";
import { startEngineWorld, type EngineWorld } from "../posts/engine-helpers.ts";

let w: EngineWorld;
let env: Record<string, string>;
beforeAll(async () => {
  w = await startEngineWorld();
  env = {
    HERALD_API_URL: w.s.url,
    HERALD_API_KEY: w.s.owner.apiKey,
    HERALD_CONFIG_DIR: join(tempDir(), "c"),
  };
  const on = await w.s.request("PATCH", `/v1/workspaces/${w.ws}`, {
    body: { link_tracking: { enabled: true, utm_source: "cli" } },
  });
  expect(on.status).toBe(200);
});
afterAll(async () => {
  await w.stop();
  removeTempDirs();
});

const create = async (text: string, ...flags: string[]) =>
  JSON.parse(
    succeeded(
      await herald(["posts", "create", text, "--destination", w.blueskyId, "--yes", "--json", ...flags], env),
    ),
  ).posts[0];

test("--no-link-tracking publishes the URL as written; posts get lists a tracked post's links", async () => {
  const untracked = await create("as written https://example.com/raw", "--no-link-tracking");
  expect(untracked.link_tracking).toBe(false);
  const tracked = await create("tracked https://example.com/cli");
  expect(tracked.link_tracking).toBe(true);
  await w.s.server.engine.runUntilIdle();
  expect(w.bluesky.records.find((r) => r.record.text.startsWith("as written"))!.record.text).toBe(
    "as written https://example.com/raw",
  );
  const links = (await w.s.request("GET", `/v1/workspaces/${w.ws}/posts/${tracked.id}/links`)).body.data;
  expect((await fetch(links[0].short_url, { redirect: "manual" })).status).toBe(302);
  const shown = succeeded(await herald(["posts", "get", tracked.id], env));
  const row = shown.split("\n").find((line) => line.includes(links[0].short_url));
  expect(row).toBeDefined();
  expect(row!.split(/\s{2,}/)).toEqual([links[0].short_url, "1", "https://example.com/cli?utm_source=cli"]);
});
