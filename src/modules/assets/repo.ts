import { and, desc, eq, inArray, isNotNull, isNull, lt, lte, or, sql } from "drizzle-orm";
import { jsonArrayHasObject } from "../../db/dialect.ts";
import { firstRow } from "../../db/engine.ts";
import type { Db } from "../../db/open.ts";
import { tablesOf, type Tables } from "../../db/tables.ts";

/** A stored asset. */
export type AssetRow = Tables["assets"]["$inferSelect"];
/** A stored multipart upload. */
export type AssetUploadRow = Tables["assetUploads"]["$inferSelect"];

/** Post states that are over: an asset they used may go. */
const TERMINAL_POST_STATES = ["published", "cancelled", "failed"];

/** Stores a new asset. */
export async function insertAsset(db: Db, row: AssetRow): Promise<void> {
  const { assets } = tablesOf(db);
  await db.insert(assets).values(row);
}

/** An asset of a workspace (deleted ones are not found). */
export async function findAsset(db: Db, workspaceId: string, id: string): Promise<AssetRow | undefined> {
  const { assets } = tablesOf(db);
  return db
    .select()
    .from(assets)
    .where(and(eq(assets.workspaceId, workspaceId), eq(assets.id, id), isNull(assets.deletedAt)))
    .then(firstRow);
}

/** An asset by id alone, deleted or not (the download route knows only the id). */
export async function findAssetById(db: Db, id: string): Promise<AssetRow | undefined> {
  const { assets } = tablesOf(db);
  return db.select().from(assets).where(eq(assets.id, id)).then(firstRow);
}

/** One page (plus one row) of a workspace's assets, newest first. */
export async function listAssets(
  db: Db,
  workspaceId: string,
  afterId: string | null,
  limit: number,
): Promise<AssetRow[]> {
  const { assets } = tablesOf(db);
  return db
    .select()
    .from(assets)
    .where(
      and(
        eq(assets.workspaceId, workspaceId),
        isNull(assets.deletedAt),
        afterId ? lt(assets.id, afterId) : undefined,
      ),
    )
    .orderBy(desc(assets.id))
    .limit(limit + 1);
}

/** Applies changes to an asset. */
export async function updateAsset(db: Db, id: string, changes: Partial<AssetRow>): Promise<void> {
  const { assets } = tablesOf(db);
  await db.update(assets).set(changes).where(eq(assets.id, id));
}

/** Ids of posts that are not over yet (drafts included) and attach the asset. */
export async function livePostsUsingAsset(db: Db, workspaceId: string, assetId: string): Promise<string[]> {
  const { posts } = tablesOf(db);
  const rows = await db
    .select({ id: posts.id })
    .from(posts)
    .where(
      and(
        eq(posts.workspaceId, workspaceId),
        sql`${posts.state} not in (${sql.join(
          TERMINAL_POST_STATES.map((s) => sql`${s}`),
          sql`, `,
        )})`,
        jsonArrayHasObject(db, posts.assetItems, "asset_id", assetId),
      ),
    )
    .limit(10);
  return rows.map((r) => r.id);
}

/** Deleted assets whose bytes are still in the store (the cleanup job removes them). */
export async function listDeletedAssetsWithBlobs(db: Db, limit: number): Promise<AssetRow[]> {
  const { assets } = tablesOf(db);
  return db
    .select()
    .from(assets)
    .where(and(isNotNull(assets.deletedAt), isNotNull(assets.blobKey)))
    .limit(limit);
}

/** Whether any asset row (deleted or not) claims this blob key. */
export async function blobKeysInUse(db: Db, keys: string[]): Promise<Set<string>> {
  const { assets, assetUploads } = tablesOf(db);
  if (keys.length === 0) return new Set();
  const fromAssets = await db
    .select({ key: assets.blobKey })
    .from(assets)
    .where(inArray(assets.blobKey, keys));
  const fromUploads = await db
    .select({ key: assetUploads.blobKey })
    .from(assetUploads)
    .where(and(inArray(assetUploads.blobKey, keys), inArray(assetUploads.status, ["pending", "completing"])));
  return new Set([...fromAssets.map((r) => r.key!), ...fromUploads.map((r) => r.key)]);
}

/** Stores a new upload. */
export async function insertUpload(db: Db, row: AssetUploadRow): Promise<void> {
  const { assetUploads } = tablesOf(db);
  await db.insert(assetUploads).values(row);
}

/** An upload of a workspace. */
export async function findUpload(
  db: Db,
  workspaceId: string,
  id: string,
): Promise<AssetUploadRow | undefined> {
  const { assetUploads } = tablesOf(db);
  return db
    .select()
    .from(assetUploads)
    .where(and(eq(assetUploads.workspaceId, workspaceId), eq(assetUploads.id, id)))
    .then(firstRow);
}

/** An upload by id alone (the part route knows only the id). */
export async function findUploadById(db: Db, id: string): Promise<AssetUploadRow | undefined> {
  const { assetUploads } = tablesOf(db);
  return db.select().from(assetUploads).where(eq(assetUploads.id, id)).then(firstRow);
}

/** The newest upload of an asset. */
export async function findLatestUploadForAsset(db: Db, assetId: string): Promise<AssetUploadRow | undefined> {
  const { assetUploads } = tablesOf(db);
  return db
    .select()
    .from(assetUploads)
    .where(eq(assetUploads.assetId, assetId))
    .orderBy(desc(assetUploads.id))
    .limit(1)
    .then(firstRow);
}

/** Applies changes to an upload only while it is in one of `states` (compare-and-set); false otherwise. */
export async function updateUploadInState(
  db: Db,
  id: string,
  states: AssetUploadRow["status"][],
  changes: Partial<AssetUploadRow>,
): Promise<boolean> {
  const { assetUploads } = tablesOf(db);
  const updated = await db
    .update(assetUploads)
    .set(changes)
    .where(and(eq(assetUploads.id, id), inArray(assetUploads.status, states)))
    .returning({ id: assetUploads.id });
  return updated.length === 1;
}

/**
 * Takes the completion lease of an upload: from `pending`, or from `completing` whose lease ran out
 * (the request holding it died). False when another request holds it or the upload is over.
 */
export async function claimUploadCompletion(
  db: Db,
  id: string,
  now: number,
  leaseUntil: number,
): Promise<boolean> {
  const { assetUploads } = tablesOf(db);
  const claimed = await db
    .update(assetUploads)
    .set({ status: "completing", leaseUntil })
    .where(
      and(
        eq(assetUploads.id, id),
        or(
          eq(assetUploads.status, "pending"),
          and(eq(assetUploads.status, "completing"), lte(assetUploads.leaseUntil, now)),
        ),
      ),
    )
    .returning({ id: assetUploads.id });
  return claimed.length === 1;
}

/** Uploads past their expiry that never completed (pending, or a completion that died). */
export async function listExpiredUploads(db: Db, now: number, limit: number): Promise<AssetUploadRow[]> {
  const { assetUploads } = tablesOf(db);
  return db
    .select()
    .from(assetUploads)
    .where(
      and(
        lte(assetUploads.expiresAt, now),
        or(
          eq(assetUploads.status, "pending"),
          and(eq(assetUploads.status, "completing"), lte(assetUploads.leaseUntil, now)),
        ),
      ),
    )
    .limit(limit);
}

/** Store upload ids Herald still waits on (pending or completing uploads). */
export async function liveStoreUploadIds(db: Db, storeUploadIds: string[]): Promise<Set<string>> {
  const { assetUploads } = tablesOf(db);
  if (storeUploadIds.length === 0) return new Set();
  const rows = await db
    .select({ id: assetUploads.storeUploadId })
    .from(assetUploads)
    .where(
      and(
        inArray(assetUploads.storeUploadId, storeUploadIds),
        inArray(assetUploads.status, ["pending", "completing"]),
      ),
    );
  return new Set(rows.map((r) => r.id));
}

/**
 * Reserved assets that will never get their bytes: their upload expired or failed, and no live post uses
 * them.
 */
export async function listAbandonedPendingAssets(db: Db, limit: number): Promise<AssetRow[]> {
  const { assets, assetUploads } = tablesOf(db);
  return db
    .select()
    .from(assets)
    .where(
      and(
        eq(assets.status, "pending_upload"),
        isNull(assets.deletedAt),
        sql`not exists (select 1 from ${assetUploads} where ${assetUploads.assetId} = ${assets.id} and ${assetUploads.status} in ('pending', 'completing', 'completed'))`,
      ),
    )
    .limit(limit);
}
