// A dashboard world with a connected Bluesky fake, and API helpers that act with the dashboard
// owner's key (the server's default key belongs to another account).
import { expect } from "bun:test";
import { startBlueskyFake, type BlueskyFake } from "../fakes/bluesky.ts";
import type { TestResponse } from "../helpers/server.ts";
import { idem } from "../posts/helpers.ts";
import { connectOwnersBluesky, dashboardWorld, type DashboardWorld } from "./support.ts";

export interface PostsWorld extends DashboardWorld {
  bluesky: BlueskyFake;
  destinationId: string;
  ws: string;
  /** An API request with the owner's key. */
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<TestResponse>;
  /** Create Post (with an Idempotency-Key); expects success and returns the first post. */
  create(when: string, body: string | string[], extra?: Record<string, unknown>): Promise<any>;
  /** GET a post (with its attempts). */
  post(id: string): Promise<any>;
  /** Runs the publishing engine until nothing is due. */
  run(): Promise<void>;
  /** Sets the workspace's time zone. */
  setTimeZone(zone: string): Promise<void>;
}

let groups = 0;

/** A dashboard world (provider time-out 1 s, loopback fakes allowed) with Bluesky connected. */
export async function postsWorld(): Promise<PostsWorld> {
  const world = await dashboardWorld({
    env: { HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1", HERALD_PROVIDER_TIMEOUT_SECONDS: "1" },
  });
  const bluesky = await startBlueskyFake();
  const ws = world.owner.workspaceId;
  const call: PostsWorld["call"] = (method, path, body, headers) =>
    world.s.request(method, path, { key: world.owner.apiKey, body, headers });
  const destinationId = await connectOwnersBluesky(world, bluesky);
  return {
    ...world,
    bluesky,
    destinationId,
    ws,
    call,
    async create(when, text, extra = {}) {
      const body = typeof text === "string" ? [text] : text;
      const item = when === "draft" ? { channel: "bluesky", body } : { destination_id: destinationId, body };
      const r = await call(
        "POST",
        `/v1/workspaces/${ws}/posts`,
        {
          when,
          ...(when === "draft" ? {} : { confirmed: true }),
          group: `dash-${++groups}`,
          posts: [item],
          ...extra,
        },
        idem(),
      );
      if (r.status !== 201 && r.status !== 202)
        throw new Error(`Create Post answered ${r.status}: ${r.text}`);
      return r.body.posts[0];
    },
    async post(id) {
      const r = await call("GET", `/v1/workspaces/${ws}/posts/${id}?include=attempts`);
      expect(r.status).toBe(200);
      return r.body;
    },
    run: () => world.s.server.engine.runUntilIdle(),
    async setTimeZone(zone) {
      const current = await call("GET", `/v1/workspaces/${ws}`);
      const patched = await call(
        "PATCH",
        `/v1/workspaces/${ws}`,
        { time_zone: zone },
        { "if-match": current.headers.get("etag")!, ...idem() },
      );
      expect({ status: patched.status, text: patched.text }).toMatchObject({ status: 200 });
    },
    async stop() {
      await world.stop();
      await bluesky.stop();
    },
  };
}

/** The dashboard path of a workspace page. */
export function pathIn(ws: string, rest: string): string {
  return `/dashboard/workspaces/${ws}/${rest}`;
}
