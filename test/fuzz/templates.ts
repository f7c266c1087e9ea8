// Bodies that pass the schema *and* the rules behind it, for operations a schema-only generator almost
// never satisfies (a post needs a destination of the workspace, a time after the clock, a confirmation).
// The generator sends them as they are and bent by the same boundary mutations as the others.
import fc from "fast-check";
import type { World } from "./world.ts";

const FUTURE = fc
  .integer({ min: Date.parse("2026-03-02T00:00:00Z"), max: Date.parse("2026-06-30T00:00:00Z") })
  .map((ms) => new Date(Math.floor(ms / 60_000) * 60_000).toISOString());
const GROUP = fc.stringMatching(/^[A-Za-z0-9_-]{1,24}$/);
const TEXT = fc.oneof(
  fc.string({ minLength: 1, maxLength: 80 }),
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 80 }),
);

/** A valid body per operation name, for the operations that have one here. */
export function templatesFor(world: World): Record<string, fc.Arbitrary<unknown>> {
  const pool = (name: string) => fc.constantFrom(...world.pools[name]!);
  const when = fc.oneof(fc.constantFrom("draft", "now", "queue"), FUTURE);
  const item = fc.record(
    {
      destination_id: pool("destination_id"),
      body: fc.array(TEXT, { minLength: 1, maxLength: 3 }),
      media: fc.constant([world.pools.asset_id![0]!]),
    },
    { requiredKeys: ["destination_id", "body"] },
  );
  const createPosts = fc.record({
    when,
    confirmed: fc.constant(true),
    group: GROUP,
    posts: fc.uniqueArray(item, { minLength: 1, maxLength: 2, selector: (p) => p.destination_id }),
  });
  const posts = "/workspaces/{workspace_id}/posts";
  return {
    [`POST ${posts}`]: createPosts,
    [`POST ${posts}/validate`]: createPosts,
    [`POST ${posts}/publish`]: fc.record({
      when: fc.oneof(fc.constant("now"), FUTURE),
      confirmed: fc.constant(true),
      posts: fc
        .tuple(pool("post_id"), fc.integer({ min: 1, max: 3 }), pool("destination_id"))
        .map(([id, version, d]) => [{ id, version, destination_id: d }]),
    }),
    [`POST ${posts}/move`]: fc.record({
      confirmed: fc.constant(true),
      local_date: FUTURE.map((t) => t.slice(0, 10)),
      posts: fc.tuple(pool("post_id"), FUTURE).map(([id, at]) => [{ id, expected_scheduled_at: at }]),
    }),
    [`POST ${posts}/{post_id}/reschedule`]: fc.record({ confirmed: fc.constant(true), scheduled_at: FUTURE }),
    [`POST ${posts}/{post_id}/retry`]: fc.constant({ confirmed: true }),
    [`PATCH ${posts}/{post_id}`]: fc.record({ body: fc.array(TEXT, { minLength: 1, maxLength: 2 }) }),
    "POST /workspaces/{workspace_id}/asset-uploads": fc.constant(world.bodies.upload),
    "POST /workspaces/{workspace_id}/asset-uploads/{upload_id}/complete": fc.constant(world.bodies.complete),
    "POST /workspaces/{workspace_id}/webhook-endpoints": fc.record({
      name: TEXT.filter((t) => t.length <= 120),
      url: fc.constant(world.receiver.url),
      event_types: fc.constant(["post.published", "post.failed"]),
    }),
    "POST /workspaces/{workspace_id}/destination-connections": fc.constantFrom(
      {
        provider: "bluesky",
        instance_origin: world.bluesky.origin,
        handle: "bob.test",
        app_password: "bob-app-pass",
      },
      { provider: "mastodon", instance_origin: world.mastodon.origin },
      { provider: "x" },
    ),
    "POST /cli-authorizations/token": fc.constant({ device_secret: world.pools.device_secret![0] }),
  };
}
