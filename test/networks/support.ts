// Create Post, Get Post and "publish now" through the API for the network tests: each call a fresh
// group and Idempotency-Key, the engine run until it has nothing left to do.
import { expect } from "bun:test";
import type { TestServer } from "../helpers/server.ts";

/** The posting calls of one test file; `world` gives the server and workspace once they exist. */
export function apiPosting(prefix: string, world: () => { s: TestServer; ws: string }) {
  let requests = 0;
  /** Create Post (confirmed, with an Idempotency-Key) of one post on `destinationId`. */
  function createPost(destinationId: string, post: Record<string, unknown>, when = "now") {
    const { s, ws } = world();
    requests += 1;
    return s.request("POST", `/v1/workspaces/${ws}/posts`, {
      headers: { "idempotency-key": `${prefix}-${Date.now()}-${requests}` },
      body: {
        when,
        confirmed: true,
        group: `${prefix}-${requests}`,
        posts: [{ destination_id: destinationId, ...post }],
      },
    });
  }
  /** The post as the API shows it. */
  async function getPost(id: string) {
    const { s, ws } = world();
    const r = await s.request("GET", `/v1/workspaces/${ws}/posts/${id}`);
    expect(r.status).toBe(200);
    return r.body;
  }
  /** Creates a post now, runs the engine until it has nothing left to do, and answers the post. */
  async function publishNow(destinationId: string, post: Record<string, unknown>) {
    const created = await createPost(destinationId, post);
    expect({ status: created.status, text: created.text }).toMatchObject({ status: 202 });
    await world().s.server.engine.runUntilIdle();
    return getPost(created.body.posts[0].id);
  }
  return { createPost, getPost, publishNow };
}
