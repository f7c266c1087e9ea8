// Fixtures for the post tests that have no API yet (assets: issue 5; X destinations: a later
// adapter) and small request helpers that work on any server and workspace.
import { expect } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { sql } from "drizzle-orm";
import { countAll } from "../../src/db/dialect.ts";
import { firstRow } from "../../src/db/engine.ts";
import { newId } from "../../src/db/ids.ts";
import { inTransaction } from "../../src/db/transaction.ts";
import { tables } from "../helpers/tables.ts";
import type { BlueskyFake } from "../fakes/bluesky.ts";
import type { TestResponse, TestServer } from "../helpers/server.ts";
import { idem } from "./helpers.ts";
import { png } from "../assets/samples.ts";

const { assets, destinations, posts } = tables;

// ---- a real PNG -------------------------------------------------------------------------------

/** A valid RGB PNG (the assets suite's writer); `padTo` makes the file exactly that many bytes. */
export function makePng(width = 4, height = 3, padTo = 0): Buffer {
  return png(width, height, padTo);
}

// ---- asset and destination rows ---------------------------------------------------------------

/**
 * Inserts an asset row directly (a fixture that skips the upload flow) and, unless it is pending, writes its blob to
 * `<dataDir>/blobs/<blobKey>`. Returns the asset id.
 */
export async function insertAsset(
  s: TestServer,
  workspaceId: string,
  options: {
    status?: "ready" | "pending_upload";
    bytes?: Buffer;
    width?: number;
    height?: number;
    contentType?: string;
    label?: string;
  } = {},
): Promise<string> {
  const id = newId("ast");
  const bytes = options.bytes ?? makePng(options.width ?? 4, options.height ?? 3);
  const blobKey = `${workspaceId}/${id}`;
  const status = options.status ?? "ready";
  // A pending asset's bytes are not there yet; its blob is written when it becomes ready (setAssetReady).
  if (status === "ready") writeBlob(s, blobKey, bytes);
  await inTransaction(s.herald.db, (tx) =>
    tx.insert(assets).values({
      id,
      workspaceId,
      type: "card",
      label: options.label ?? `image ${id.slice(-4)}`,
      contentType: options.contentType ?? "image/png",
      byteSize: bytes.length,
      width: options.width ?? 4,
      height: options.height ?? 3,
      durationSec: null,
      status,
      blobKey,
      createdAt: s.clock.now(),
      deletedAt: null,
    }),
  );
  return id;
}

function writeBlob(s: TestServer, blobKey: string, bytes: Buffer): void {
  const path = join(s.dataDir, "blobs", blobKey);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, bytes);
}

/** What the upload flow will do when an upload completes: the blob appears and the row is ready. */
export async function setAssetReady(
  s: TestServer,
  assetId: string,
  bytes: Buffer = makePng(),
): Promise<void> {
  const row = (await s.herald.db.select().from(assets).where(sql`${assets.id} = ${assetId}`).then(firstRow))!;
  writeBlob(s, row.blobKey!, bytes);
  await inTransaction(s.herald.db, (tx) =>
    tx.update(assets).set({ status: "ready", byteSize: bytes.length }).where(sql`${assets.id} = ${assetId}`),
  );
}

/**
 * App settings a server needs for X destinations to be `ready` (X connects through Herald's own app;
 * without them an X destination is `unavailable: app_not_configured`).
 */
export const X_APP_ENV = { HERALD_X_CLIENT_ID: "x-test-client", HERALD_X_CLIENT_SECRET: "x-test-secret" };

/**
 * Inserts a connected X destination; returns its id. Its origin is a name that can never resolve
 * (`.invalid`), so an attempt to publish there is refused before anything is sent, on any machine.
 */
export async function insertXDestination(s: TestServer, workspaceId: string): Promise<string> {
  const id = newId("dest");
  const now = s.clock.now();
  await inTransaction(s.herald.db, (tx) =>
    tx.insert(destinations).values({
      id,
      workspaceId,
      channel: "x",
      displayName: "Herald on X",
      handle: "herald",
      externalId: `x-${id.slice(-6)}`,
      profileImageUrl: null,
      origin: "https://api.x.invalid",
      credentialsSealed: s.herald.secrets.encrypt("{}"),
      limits: {},
      enabled: true,
      isDefault: false,
      unavailableReason: null,
      createdAt: now,
      updatedAt: now,
      deletedAt: null,
    }),
  );
  return id;
}

/** Number of stored posts (any workspace). */
export async function countPosts(s: TestServer): Promise<number> {
  const [row] = await s.herald.db.select({ n: countAll() }).from(posts);
  return row!.n;
}

// ---- requests -----------------------------------------------------------------------------------

/** Connects a Bluesky account of the fake (handle + app password, completes at once). */
export async function connectBluesky(
  s: TestServer,
  fake: BlueskyFake,
  workspaceId: string,
  handle = "alice.test",
  password = "alice-app-pass",
): Promise<string> {
  const r = await s.request("POST", `/v1/workspaces/${workspaceId}/destination-connections`, {
    body: { provider: "bluesky", instance_origin: fake.origin, handle, app_password: password },
  });
  expect({ status: r.status, text: r.text }).toMatchObject({ status: 201 });
  expect(r.body.status).toBe("completed");
  return r.body.destination_id;
}

/** Request helpers bound to one server and workspace. */
export function api(s: TestServer, ws: string) {
  const base = `/v1/workspaces/${ws}`;
  return {
    create: (body: Record<string, unknown>) => s.request("POST", `${base}/posts`, { body, headers: idem() }),
    get: (id: string, query = "") => s.request("GET", `${base}/posts/${id}${query}`),
    list: (query = "") => s.request("GET", `${base}/posts${query}`),
    action: (id: string, action: "cancel" | "retry" | "reschedule", body: Record<string, unknown>) =>
      s.request("POST", `${base}/posts/${id}/${action}`, { body }),
    move: (body: Record<string, unknown>) => s.request("POST", `${base}/posts/move`, { body }),
    validate: (body: Record<string, unknown>) => s.request("POST", `${base}/posts/validate`, { body }),
    putQueue: (windows: { weekday: number; local_time: string }[]) =>
      s.request("PUT", `${base}/queue`, { body: { windows } }),
    getQueue: () => s.request("GET", `${base}/queue`),
    setTimeZone: (time_zone: string) => s.request("PATCH", `/v1/workspaces/${ws}`, { body: { time_zone } }),
  };
}

/** Asserts a 2xx (showing the body when it is not) and returns the response. */
export function ok(r: TestResponse, status = 201): TestResponse {
  expect({ status: r.status, text: r.text }).toMatchObject({ status });
  return r;
}

/** Every weekday (1-7) at each local time. */
export function daily(...times: string[]): { weekday: number; local_time: string }[] {
  return [1, 2, 3, 4, 5, 6, 7].flatMap((weekday) => times.map((local_time) => ({ weekday, local_time })));
}
