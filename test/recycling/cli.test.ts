// `herald posts create --recycle-every DAYS --recycle-count N [--recycle-variation TEXT…]`, run as a
// process against a real server: the post carries `recycle`, `herald posts get` shows it, and the
// API's range check comes back with its pointer.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { startPostsWorld, type PostsWorld } from "../posts/helpers.ts";
import { herald, removeTempDirs, tempDir } from "../cli/helpers.ts";

let w: PostsWorld;
let env: Record<string, string>;

beforeAll(async () => {
  w = await startPostsWorld();
  env = {
    HERALD_API_URL: w.s.url,
    HERALD_API_KEY: w.s.owner.apiKey,
    HERALD_CONFIG_DIR: join(tempDir(), "config"),
  };
});
afterAll(async () => {
  await w.stop();
  removeTempDirs();
});

test("a draft with recycling flags carries recycle; posts get shows the plan", async () => {
  const created = await herald(
    [
      "posts",
      "create",
      "Evergreen from the CLI",
      "--when",
      "draft",
      "--group",
      "cli-recycle",
      "--recycle-every",
      "10",
      "--recycle-count",
      "4",
      "--recycle-variation",
      "Once more",
      "--recycle-variation",
      "And again",
      "--json",
    ],
    env,
  );
  expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: "" });
  const post = JSON.parse(created.stdout).posts[0];
  expect(post.recycle).toMatchObject({
    every_days: 10,
    count: 4,
    variations: [["Once more"], ["And again"]],
    copies_published: 0,
    next_copy_at: null,
  });
  const shown = await herald(["posts", "get", post.id], env);
  expect(shown.code).toBe(0);
  expect(shown.stdout).toMatch(/^recycling\s+4 copies every 10 days, 0 published$/m);
});

test("one flag without the other is a usage error; a range the API refuses names its pointer", async () => {
  const half = await herald(["posts", "create", "x", "--when", "draft", "--recycle-every", "3"], env);
  expect(half.code).toBe(2);
  expect(half.stderr).toContain("--recycle-every DAYS and --recycle-count N");
  const range = await herald(
    ["posts", "create", "x", "--when", "draft", "--recycle-every", "400", "--recycle-count", "2"],
    env,
  );
  expect(range.code).not.toBe(0);
  expect(range.stderr).toContain("/posts/0/recycle/every_days");
});
