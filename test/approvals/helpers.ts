import { expect } from "bun:test";
import { ROLE_SCOPES } from "../../src/modules/account/roles.ts";
import { startSlackFake, type SlackFake } from "../fakes/slack.ts";
import { idem, startPostsWorld, type PostsWorld } from "../posts/helpers.ts";
import type { TestResponse } from "../helpers/server.ts";

/** A posts world (Mastodon connected) with Slack, approval required, and a member's key. */
export interface ApprovalWorld extends PostsWorld {
  slack: SlackFake;
  /** A live key with a member's scopes (no posts:approve). */
  memberKey: string;
  /** POST/GET under the workspace as the owner (default) or with `key`. */
  call(method: string, path: string, body?: unknown, key?: string): Promise<TestResponse>;
}

export async function startApprovalWorld(): Promise<ApprovalWorld> {
  const slack = startSlackFake();
  const w = await startPostsWorld({
    HERALD_SLACK_BOT_TOKEN: slack.token,
    HERALD_SLACK_API_BASE: slack.origin,
  });
  const memberKey = await w.s.createKey({ scopes: [...ROLE_SCOPES.member] });
  const call = (method: string, path: string, body?: unknown, key?: string) =>
    w.s.request(method, `/v1/workspaces/${w.ws}${path}`, {
      body,
      key,
      headers: method === "GET" ? {} : idem(),
    });
  const on = await call("PATCH", "", { approval_required: true });
  expect({ status: on.status, text: on.text }).toMatchObject({ status: 200 });
  return {
    ...w,
    slack,
    memberKey,
    call,
    async stop() {
      await w.stop();
      await slack.stop();
    },
  };
}

let groups = 0;
/** A Create Post body for the world's Mastodon destination, in a fresh group. */
export function postBody(w: PostsWorld, when: string, text = "Launch day") {
  return {
    when,
    confirmed: true,
    group: `approval-${++groups}`,
    posts: [{ destination_id: w.destinationId, body: [text] }],
  };
}

/** A member's post awaiting approval (Create Post answered 202). */
export async function awaitingPost(w: ApprovalWorld, when = "2026-03-02T09:00:00Z"): Promise<any> {
  const r = await w.call("POST", "/posts", postBody(w, when), w.memberKey);
  expect({ status: r.status, text: r.text }).toMatchObject({ status: 202 });
  return r.body.posts[0];
}
