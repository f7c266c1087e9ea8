// A publishing load: Create Post requests (1–3 destinations, now or a few seconds ahead) with an
// Idempotency-Key each, recording every acknowledged (2xx) post and every request left without an
// answer, which the client sends again (same key) after the restart, as a careful client would.
import type { Client } from "./support.ts";
import type { seeded } from "./support.ts";

export type Channel = "mastodon" | "bluesky" | "x";

/** X posts the load sends at most, under the workspace's 50 a month. */
const X_BUDGET = 40;

interface Sent {
  key: string;
  body: { when: string; confirmed: true; group: string; posts: { destination_id: string; body: string[] }[] };
}

/** An acknowledged post: what the client was told exists. */
export interface Acked {
  id: string;
  group: string;
  text: string;
  channel: Channel;
}

export class PostLoad {
  /** Acknowledged posts by id. */
  readonly acked = new Map<string, Acked>();
  /** Requests without an answer (the server died under them), to send again. */
  readonly unanswered: Sent[] = [];
  /** Answers that were neither 2xx, 5xx nor "no answer": each is a finding. */
  readonly unexpected: { status: number; body: unknown }[] = [];
  /** 5xx answers (the database away): their problem codes; the request is sent again later. */
  readonly unavailable: { status: number; code: string; contentType: string | null }[] = [];
  /** Answer statuses seen, for the report. */
  readonly statuses = new Map<number, number>();
  private counter = 0;
  /** Requests with an X post so far: X allows 50 posts per workspace a month (x_usage). */
  private xSent = 0;

  constructor(
    private readonly api: () => Client,
    private readonly workspaceId: string,
    private readonly destinations: Record<Channel, string>,
    private readonly random: ReturnType<typeof seeded>,
    private readonly tag: string,
  ) {}

  /** Sends requests from `lanes` parallel clients, each pausing `pauseMs`, until `running()` is false. */
  async run(running: () => boolean, lanes = 2, pauseMs = 100): Promise<void> {
    await Promise.all(
      Array.from({ length: lanes }, async () => {
        while (running()) {
          await this.send(this.next());
          await Bun.sleep(this.random.int(0, pauseMs));
        }
      }),
    );
  }

  /** Sends every unanswered request once more with its key; answers go on the record as before. */
  async resend(): Promise<number> {
    const again = this.unanswered.splice(0);
    for (const sent of again) await this.send(sent);
    return again.length;
  }

  private next(): Sent {
    const n = ++this.counter;
    const channels: Channel[] = (["mastodon", "bluesky", "x"] as const).filter(
      () => this.random.next() < 0.5,
    );
    if (channels.length === 0) channels.push(this.random.pick(["mastodon", "bluesky"] as const));
    if (channels.includes("x") && ++this.xSent > X_BUDGET) channels.splice(channels.indexOf("x"), 1);
    if (channels.length === 0) channels.push("mastodon");
    const scheduled = this.random.next() < 0.4;
    const when = scheduled ? new Date(Date.now() + this.random.int(1000, 4000)).toISOString() : "now";
    const group = `${this.tag}-${n}`;
    return {
      key: `${group}-key`,
      body: {
        when,
        confirmed: true,
        group,
        posts: channels.map((channel) => ({
          destination_id: this.destinations[channel],
          body: [`${group} on ${channel}`],
        })),
      },
    };
  }

  private async send(sent: Sent): Promise<void> {
    const r = await this.api()("POST", `/workspaces/${this.workspaceId}/posts`, sent.body, {
      "idempotency-key": sent.key,
    });
    this.statuses.set(r.status, (this.statuses.get(r.status) ?? 0) + 1);
    if (r.status >= 500)
      this.unavailable.push({
        status: r.status,
        code: r.body?.code,
        contentType: r.headers.get("content-type"),
      });
    if (r.status === 0 || r.status >= 500) {
      this.unanswered.push(sent);
      // The server is gone; the lane waits for the next one instead of spinning.
      await Bun.sleep(20);
      return;
    }
    if (r.status < 200 || r.status > 299) {
      this.unexpected.push({ status: r.status, body: r.body });
      return;
    }
    for (const post of r.body.posts) {
      const channel = (Object.keys(this.destinations) as Channel[]).find(
        (c) => this.destinations[c] === post.destination_id,
      )!;
      this.acked.set(post.id, { id: post.id, group: sent.body.group, text: post.payload.body[0], channel });
    }
  }
}
