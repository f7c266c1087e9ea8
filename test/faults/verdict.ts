// What must hold after a fault run, as a list of violations (empty: it held), so a failure shows
// every broken post at once with the seed printed above it.
import { waitFor } from "../posts/engine-helpers.ts";
import type { Acked } from "./load.ts";
import type { Client } from "./support.ts";

/** End states that either are done or tell the user what to do (with `last_error`). */
const SETTLED = new Set(["published", "needs-attention", "failed", "missed"]);

export interface Verdict {
  violations: string[];
  /** Posts by end state, for the report. */
  states: Record<string, number>;
}

/**
 * Checks the posts Herald holds against what the client was told (`acked`) and what the networks
 * hold (`copies`: objects per text). Every acknowledged post exists with its text; every post is
 * settled; a published post is on its network exactly once; nothing is anywhere twice; a post that
 * needs attention is on its network at most once; nothing on a network is unknown to Herald.
 */
export function judge(posts: any[], acked: Map<string, Acked>, copies: Map<string, number>): Verdict {
  const violations: string[] = [];
  const states: Record<string, number> = {};
  const byId = new Map(posts.map((p) => [p.id as string, p]));
  const texts = new Set<string>();
  for (const a of acked.values()) {
    const post = byId.get(a.id);
    if (!post) violations.push(`acknowledged post ${a.id} (${a.text}) is missing`);
    else if (post.payload.body[0] !== a.text) violations.push(`post ${a.id} holds ${post.payload.body[0]}`);
  }
  for (const post of posts) {
    const text = String(post.payload.body[0]);
    texts.add(text);
    states[post.state] = (states[post.state] ?? 0) + 1;
    const n = copies.get(text) ?? 0;
    const where = `${post.id} (${text}, ${post.state})`;
    if (!SETTLED.has(post.state)) violations.push(`${where} did not settle`);
    // A missed post says it by its state and `missed_at` (retry or reschedule); others by their error.
    const said = post.state === "missed" ? post.missed_at : post.last_error?.user_action;
    if (post.state !== "published" && !said)
      violations.push(`${where} does not say what to do: ${JSON.stringify(post.last_error)}`);
    if (post.state === "published" && n !== 1) violations.push(`${where} is on its network ${n} times`);
    if (post.state === "published" && post.receipts.length !== 1)
      violations.push(`${where} has ${post.receipts.length} receipts`);
    if (post.state === "failed" && n !== 0) violations.push(`${where} failed but the network has it`);
    if (n > 1) violations.push(`${where} reached its network ${n} times`);
  }
  for (const [text, n] of copies)
    if (!texts.has(text)) violations.push(`the network holds ${n} × "${text}", which no post has`);
  return { violations, states };
}

/** Waits until no post of the workspace has work due (the `scheduled` view is empty). */
export async function settled(api: Client, workspaceId: string, timeoutMs = 60_000): Promise<void> {
  await waitFor(
    "every post to settle",
    async () => {
      const r = await api("GET", `/workspaces/${workspaceId}/posts?view=scheduled&limit=1`);
      return r.status === 200 && r.body.data.length === 0 ? true : undefined;
    },
    timeoutMs,
    250,
  );
}
