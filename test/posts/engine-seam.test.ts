// The engine on the network seam: a token refresh another process holds is waited for and never
// repeated, media that cannot be read is a retry and never an unknown outcome, and a network whose
// address the guard refuses fails at once instead of being retried forever.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { tables } from "../helpers/tables.ts";
import { inTransaction } from "../../src/db/transaction.ts";
import { createBlueskyAdapter } from "../../src/providers/bluesky/adapter.ts";
import { destinationRef } from "../../src/modules/destinations/present.ts";
import { findDestinationById } from "../../src/modules/destinations/repo.ts";
import { insertAsset } from "./fixtures.ts";
import { createPosts, getPost } from "./helpers.ts";
import { posted, publish, startEngineWorld, type EngineWorld } from "./engine-helpers.ts";

const { destinations } = tables;

let w: EngineWorld;
beforeAll(async () => {
  w = await startEngineWorld();
});
afterAll(async () => {
  await w.stop();
});

const run = () => w.s.server.engine.runUntilIdle();
let n = 0;
const unique = (text: string) => `${text} #${++n}`;

describe("token refresh across processes", () => {
  test("a refresh another process holds is waited for; its credentials are used, not refreshed again", async () => {
    const db = w.s.herald.db;
    const now = w.s.clock.now();
    w.bluesky.expireAccessTokens();
    // "Another process" takes the destination's refresh lease first.
    await inTransaction(db, (tx) =>
      tx
        .update(destinations)
        .set({ refreshLeaseOwner: "proc_other", refreshLeaseExpiresAt: now + 60_000 })
        .where(eq(destinations.id, w.blueskyId)),
    );
    const refreshesBefore = posted(w.bluesky, "refreshSession").length;
    const created = await publish(w, w.blueskyId, [unique("waits for the other refresh")]);
    const running = run();
    await Bun.sleep(300);
    // The other process refreshes, stores the rotated pair and gives the lease back.
    const row = (await findDestinationById(db, w.blueskyId))!;
    const adapter = createBlueskyAdapter({ fetch, clock: w.s.clock, timeoutMs: 5000 });
    const fresh = await adapter.refreshCredentials({ destination: destinationRef(w.s.herald, row) });
    await inTransaction(db, (tx) =>
      tx
        .update(destinations)
        .set({
          credentialsSealed: w.s.herald.secrets.encrypt(JSON.stringify(fresh)),
          refreshLeaseOwner: null,
          refreshLeaseExpiresAt: null,
        })
        .where(eq(destinations.id, w.blueskyId)),
    );
    await running;
    expect(await getPost(w, created.id)).toMatchObject({ state: "published", attempt_count: 1 });
    // One refresh in all: the other process's. This process used what it stored.
    expect(posted(w.bluesky, "refreshSession").length - refreshesBefore).toBe(1);
    const after = (await findDestinationById(db, w.blueskyId))!;
    expect([after.refreshLeaseOwner, after.refreshLeaseExpiresAt]).toEqual([null, null]);
  });

  test("a refresh that answers without a new refresh token keeps the stored one", async () => {
    const db = w.s.herald.db;
    const before = destinationRef(w.s.herald, (await findDestinationById(db, w.blueskyId))!).credentials;
    w.bluesky.expireAccessTokens();
    // The PDS answers refreshSession without a refreshJwt once (a network that does not rotate).
    w.bluesky.failNext(1, {
      status: 200,
      path: "/xrpc/com.atproto.server.refreshSession",
      body: {
        accessJwt: "",
        refreshJwt: "",
        did: before.did,
        handle: before.handle,
      },
    });
    const created = await publish(w, w.blueskyId, [unique("empty refresh answer")]);
    await run();
    const stored = destinationRef(w.s.herald, (await findDestinationById(db, w.blueskyId))!).credentials;
    expect(stored.refreshJwt).toBe(before.refreshJwt as string);
    expect(typeof stored.accessJwt).toBe("string");
    expect((stored.accessJwt as string).length).toBeGreaterThan(0);
    expect((await getPost(w, created.id)).state).not.toBe("processing");
  });
});

describe("failures before anything was sent", () => {
  test("media whose bytes are gone is a retry with a clear error, never an unknown outcome", async () => {
    const assetId = await insertAsset(w.s, w.ws);
    rmSync(join(w.s.dataDir, "blobs", w.ws, assetId), { force: true });
    const text = unique("missing media");
    const r = await createPosts(w, {
      when: "now",
      confirmed: true,
      group: `seam-${n}`,
      posts: [{ destination_id: w.destinationId, body: [text], media: [assetId] }],
    });
    expect(r.status).toBe(202);
    await run();
    const post = await getPost(w, r.body.posts[0].id, true);
    expect(post).toMatchObject({
      state: "ready",
      retry_safety: "safe",
      last_error: { code: "provider_unavailable", retryable: true },
    });
    expect(post.last_error.message).toContain("could not be read from storage");
    expect(post.attempts[0]).toMatchObject({ status: "failed", retry_safety: "safe" });
    expect(w.mastodon.statuses.some((s) => s.text === text)).toBe(false);
  });

  test("a network whose address the guard refuses fails at once, without automatic retries", async () => {
    const db = w.s.herald.db;
    // A destination whose instance now resolves to a private address (10/8 is never admitted).
    const row = (await findDestinationById(db, w.destinationId))!;
    const id = `${row.id}b`;
    await inTransaction(db, (tx) =>
      tx.insert(destinations).values({
        ...row,
        id,
        externalId: `${row.externalId}-b`,
        origin: "http://10.0.0.7",
        isDefault: false,
      }),
    );
    const created = await publish(w, id, [unique("private address")]);
    await run();
    const post = await getPost(w, created.id, true);
    expect(post).toMatchObject({
      state: "failed",
      attempt_count: 1,
      last_error: { code: "provider_address_blocked", retryable: false, retry_safety: "not_retryable" },
    });
    expect(post.attempts).toHaveLength(1);
  });
});
