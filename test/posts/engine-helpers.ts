// Helpers of the engine tests: worlds with Mastodon and Bluesky fakes, outbox reads, a fault that
// hits only the n-th matching request, and real `herald serve` child processes.
import { expect } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { engineOf, type Db } from "../../src/db/engine.ts";
import { openDatabase } from "../../src/db/open.ts";
import { PublishingEngine } from "../../src/modules/publishing/engine.ts";
import { itemRecordKey } from "../../src/providers/bluesky/tid.ts";
import { startBlueskyFake, type BlueskyFake } from "../fakes/bluesky.ts";
import { startMastodonFake, type MastodonFake } from "../fakes/mastodon.ts";
import type { FailSpec, FakeControls } from "../fakes/shared.ts";
import { herald } from "../cli/helpers.ts";
import { freshDatabase } from "../helpers/database.ts";
import { spawnHerald, type HeraldChild } from "../helpers/process.ts";
import { startTestServer } from "../helpers/server.ts";
import { connectMastodon, idem, type PostsWorld } from "./helpers.ts";
import { freePort } from "../helpers/ports.ts";
import { returnFromOAuth } from "../helpers/oauth-return.ts";

/** A posts world with a Bluesky destination too. */
export interface EngineWorld extends PostsWorld {
  bluesky: BlueskyFake;
  blueskyId: string;
}

/** Connects alice.test of the Bluesky fake with its app password (completes at once). */
export async function connectBluesky(
  s: PostsWorld["s"],
  fake: BlueskyFake,
  workspaceId = s.owner.workspaceId,
): Promise<string> {
  const r = await s.request("POST", `/v1/workspaces/${workspaceId}/destination-connections`, {
    body: {
      provider: "bluesky",
      instance_origin: fake.origin,
      handle: "alice.test",
      app_password: "alice-app-pass",
    },
  });
  expect(r.status).toBe(201);
  expect(r.body.status).toBe("completed");
  return r.body.destination_id;
}

/** A test server (clock 2026-03-01T12:00Z) with a Mastodon and a Bluesky fake, both connected. */
export async function startEngineWorld(env: Record<string, string> = {}): Promise<EngineWorld> {
  const s = await startTestServer({ env: { HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1", ...env } });
  const mastodon = await startMastodonFake({ mediaProcessingPolls: 0 });
  const bluesky = await startBlueskyFake();
  const destinationId = await connectMastodon(s, mastodon);
  const blueskyId = await connectBluesky(s, bluesky);
  return {
    s,
    mastodon,
    bluesky,
    destinationId,
    blueskyId,
    ws: s.owner.workspaceId,
    async stop() {
      await s.stop();
      await mastodon.stop();
      await bluesky.stop();
    },
  };
}

/**
 * Writes a record with `text` under the key Herald chose for item `index` of post `postId` on the
 * Bluesky fake, as another client editing the post would (com.atproto.repo.putRecord as alice.test):
 * Herald's look-up then finds a record that is not its item, and cannot tell what became of it.
 */
export async function replaceBlueskyRecord(fake: BlueskyFake, postId: string, text: string, index = 0) {
  const xrpc = async (nsid: string, body: unknown, token?: string) => {
    const response = await fetch(`${fake.origin}/xrpc/${nsid}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    return (await response.json()) as Record<string, any>;
  };
  const session = await xrpc("com.atproto.server.createSession", {
    identifier: "alice.test",
    password: "alice-app-pass",
  });
  const rkey = itemRecordKey({ idempotencyKey: `${postId}.${index}`, itemIndex: index });
  const record = { $type: "app.bsky.feed.post", text, createdAt: new Date().toISOString() };
  await xrpc(
    "com.atproto.repo.putRecord",
    { repo: session.did, collection: "app.bsky.feed.post", rkey, record },
    session.accessJwt,
  );
}

/** The destination id of a channel in the world. */
export function destinationOf(w: EngineWorld, channel: "mastodon" | "bluesky"): string {
  return channel === "mastodon" ? w.destinationId : w.blueskyId;
}

let groups = 0;
/** Create Post `when` (default now) with one post; returns the created post. */
export async function publish(
  w: PostsWorld,
  destinationId: string,
  body: string[],
  when = "now",
): Promise<any> {
  const r = await w.s.request("POST", `/v1/workspaces/${w.ws}/posts`, {
    body: { when, confirmed: true, group: `g${++groups}`, posts: [{ destination_id: destinationId, body }] },
    headers: idem(),
  });
  expect({ status: r.status, text: r.text }).toMatchObject({ status: when === "now" ? 202 : 201 });
  return r.body.posts[0];
}

/** Rows of the events outbox for a post, oldest first (outbox ids grow with time). */
export async function outbox(
  w: PostsWorld,
  postId: string,
): Promise<{ type: string; post_id: string; payload: any }[]> {
  const rows = await engineOf(w.s.herald.db).query<{ type: string; post_id: string; payload: string }>(
    "SELECT type, post_id, payload FROM events_outbox WHERE post_id = ? ORDER BY id",
    [postId],
  );
  return rows.map((r) => ({ ...r, payload: JSON.parse(r.payload) }));
}

/** Requests the fake received whose path contains `part` (POST only). */
export function posted(fake: FakeControls, part: string) {
  return fake.requests.filter((r) => r.method === "POST" && r.path.includes(part));
}

/**
 * Runs `action` when the n-th (1-based, counted from now) POST whose path contains `part` arrives,
 * before the fake acts on it: the fake logs a request before it reads its switches.
 */
/**
 * A run of its own engine (one tick, then stopped) whose create of `postId`'s item `index` reaches the
 * Mastodon fake and is answered only after `delayMs`; returns once that create has arrived.
 */
export async function startSlowRun(
  w: PostsWorld,
  postId: string,
  index: number,
  delayMs: number,
): Promise<PublishingEngine> {
  // Items are created in order: the item's create is the (index + 1)th from here.
  onNth(w.mastodon, "/api/v1/statuses", index + 1, () => (w.mastodon.delayMs = delayMs));
  const slow = new PublishingEngine(w.s.herald);
  await slow.tick();
  slow.stop();
  await waitFor("the slow create to arrive", () =>
    posted(w.mastodon, "/api/v1/statuses").some((r) => r.headers["idempotency-key"] === `${postId}.${index}`)
      ? true
      : undefined,
  );
  w.mastodon.delayMs = 0;
  return slow;
}

export function onNth(fake: FakeControls, part: string, n: number, action: () => void): void {
  let seen = 0;
  const push = fake.requests.push.bind(fake.requests);
  fake.requests.push = (...items) => {
    for (const item of items)
      if (item.method === "POST" && item.path.includes(part) && ++seen === n) action();
    return push(...items);
  };
}

/** Makes the n-th POST whose path contains `part` (counted from now) answer with `spec`. */
export function failNth(fake: FakeControls, part: string, n: number, spec: FailSpec): void {
  onNth(fake, part, n, () => fake.failNext(1, { path: part, ...spec }));
}

/** Polls `check` every 25 ms until it returns a value, or fails after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 10_000,
  everyMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await Bun.sleep(everyMs);
  }
}

// ---- real `herald serve` processes ----

/**
 * Storage shared by child processes: a data directory and, on PostgreSQL, one fresh database
 * (`env` selects it); `cleanup` removes both.
 */
export interface SharedData {
  dir: string;
  /** The variables every process on this storage gets (HERALD_DATA_DIR, and the database's). */
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

/** A fresh data directory (and database) for child processes. */
export async function tempDataDir(): Promise<SharedData> {
  const dir = mkdtempSync(join(tmpdir(), "herald-engine-"));
  const database = await freshDatabase();
  return {
    dir,
    env: { HERALD_DATA_DIR: dir, ...database.env },
    async cleanup() {
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `herald admin bootstrap --json` on shared data: the first account's workspace and live key. */
export async function bootstrapCli(data: SharedData): Promise<{ workspaceId: string; apiKey: string }> {
  const { code, stdout, stderr } = await herald(
    ["admin", "bootstrap", "--email", "owner@example.com", "--workspace-name", "Engine", "--json"],
    data.env,
  );
  if (code !== 0) throw new Error(`bootstrap failed (${code}): ${stderr}`);
  const out = JSON.parse(stdout);
  return { workspaceId: out.workspace_id, apiKey: out.api_key };
}

/** A running `herald serve` child process. */
export type HeraldProcess = HeraldChild;

/**
 * Starts `bun src/main.ts serve` with `env` on `port` (a free one if omitted), its output in a file
 * under `logs`, and waits until /health answers with a status `ready` accepts (default 2xx).
 */
export async function serveOnLogs(input: {
  env: Record<string, string>;
  logs: string;
  port?: number;
  timeoutMs?: number;
  pollMs?: number;
  ready?: (status: number) => boolean;
}): Promise<HeraldProcess> {
  const port = input.port ?? (await freePort());
  const herald = await spawnHerald({
    port,
    baseUrl: true,
    env: { HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1", ...input.env },
    logFile: join(input.logs, `serve-${port}-${Date.now()}.log`),
  });
  await herald.waitForHealth(input);
  return herald;
}

/** Starts `bun src/main.ts serve` on shared data at a free port and waits until /health answers. */
export function startHerald(data: SharedData, env: Record<string, string> = {}): Promise<HeraldProcess> {
  return serveOnLogs({ env: { ...data.env, ...env }, logs: data.dir });
}

/**
 * JSON API calls against a child process with a key: status, headers and the body (parsed when it
 * is JSON, else the text). With `deadIsStatus0` a refused connection (the child is dead) is status 0
 * instead of an error, as the fault scripts want.
 */
export function apiClient(baseUrl: () => string, apiKey: string, options: { deadIsStatus0?: boolean } = {}) {
  return async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: any; headers: Headers }> => {
    let response: Response;
    try {
      response = await fetch(`${baseUrl()}/v1${path}`, {
        method,
        headers: {
          authorization: `Bearer ${apiKey}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (error) {
      if (!options.deadIsStatus0) throw error;
      return { status: 0, body: null, headers: new Headers() };
    }
    const text = await response.text();
    let parsed: any = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text;
    }
    return { status: response.status, body: parsed, headers: response.headers };
  };
}

/** Connects a Mastodon fake account through a child process's OAuth flow. */
export async function connectMastodonVia(
  api: ReturnType<typeof apiClient>,
  workspaceId: string,
  fake: MastodonFake,
): Promise<string> {
  const started = await api("POST", `/workspaces/${workspaceId}/destination-connections`, {
    provider: "mastodon",
    instance_origin: fake.origin,
  });
  expect(started.status).toBe(201);
  const authorize = await fetch(started.body.authorization_url, { redirect: "manual" });
  expect(authorize.status).toBe(302);
  expect((await returnFromOAuth(authorize.headers.get("location")!)).status).toBe(200);
  const done = await api("GET", `/workspaces/${workspaceId}/destination-connections/${started.body.id}`);
  expect(done.body.status).toBe("completed");
  return done.body.destination_id;
}

/**
 * Opens the shared database from the test process too (lease owners while processes run); read
 * with query builders, which on SQLite use the read-only connection and take no write lock.
 * Close it with `engineOf(db).close()`.
 */
export async function openShared(data: SharedData): Promise<Db> {
  return openDatabase({
    dataDir: data.dir,
    databaseUrl: data.env.HERALD_DATABASE_URL ?? null,
    databasePool: 2,
  });
}

export { startMastodonFake };

/**
 * Runs `work` while `fake` stores what it receives and never answers (a create whose answer is lost),
 * and lets it answer again afterwards, whatever `work` did.
 */
export async function whileHanging<T>(
  fake: { hangAfterReceive: boolean },
  work: () => Promise<T>,
): Promise<T> {
  fake.hangAfterReceive = true;
  try {
    return await work();
  } finally {
    fake.hangAfterReceive = false;
  }
}
