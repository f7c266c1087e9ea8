import { expect } from "bun:test";
import { startMastodonFake, type MastodonFake } from "../fakes/mastodon.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { returnFromOAuth } from "../helpers/oauth-return.ts";

/** A test server that may talk to loopback fakes, plus a connected Mastodon destination. */
export interface PostsWorld {
  s: TestServer;
  mastodon: MastodonFake;
  destinationId: string;
  ws: string;
  stop(): Promise<void>;
}

/** Connects a Mastodon account of `fake` through the real OAuth flow (connection → authorize → callback). */
export async function connectMastodon(
  s: TestServer,
  fake: MastodonFake,
  workspaceId = s.owner.workspaceId,
): Promise<string> {
  const started = await s.request("POST", `/v1/workspaces/${workspaceId}/destination-connections`, {
    body: { provider: "mastodon", instance_origin: fake.origin },
  });
  expect(started.status).toBe(201);
  expect(started.body.status).toBe("pending");
  const authorize = await fetch(started.body.authorization_url, { redirect: "manual" });
  expect(authorize.status).toBe(302);
  const callback = await returnFromOAuth(authorize.headers.get("location")!);
  expect(callback.status).toBe(200);
  const done = await s.request(
    "GET",
    `/v1/workspaces/${workspaceId}/destination-connections/${started.body.id}`,
  );
  expect(done.body.status).toBe("completed");
  return done.body.destination_id;
}

/** Starts a server (clock at 2026-03-01T12:00Z) and a Mastodon fake, connected. */
export async function startPostsWorld(env: Record<string, string> = {}): Promise<PostsWorld> {
  const s = await startTestServer({ env: { HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1", ...env } });
  const mastodon = await startMastodonFake({ mediaProcessingPolls: 0 });
  const destinationId = await connectMastodon(s, mastodon);
  return {
    s,
    mastodon,
    destinationId,
    ws: s.owner.workspaceId,
    async stop() {
      await s.stop();
      await mastodon.stop();
    },
  };
}

let keys = 0;
/** A fresh Idempotency-Key header. */
export function idem(): Record<string, string> {
  return { "idempotency-key": `test-${Date.now()}-${++keys}` };
}

/** Create Post with an Idempotency-Key. */
export function createPosts(w: PostsWorld, body: Record<string, unknown>) {
  return w.s.request("POST", `/v1/workspaces/${w.ws}/posts`, { body, headers: idem() });
}

/** GET a post. */
export async function getPost(w: PostsWorld, id: string, include = false) {
  const r = await w.s.request(
    "GET",
    `/v1/workspaces/${w.ws}/posts/${id}${include ? "?include=attempts" : ""}`,
  );
  expect(r.status).toBe(200);
  return r.body;
}
