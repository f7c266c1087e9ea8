import { and, desc, eq, inArray, isNotNull, isNull, lt, lte, or, sql } from "drizzle-orm";
import type { Db } from "../../db/open.ts";
import { assets, assetUploads, posts } from "../../db/schema.ts";

/** A stored asset. */
export type AssetRow = typeof assets.$inferSelect;
/** A stored multipart upload. */
export type AssetUploadRow = typeof assetUploads.$inferSelect;

/** Post states that are over: an asset they used may go. */
const TERMINAL_POST_STATES = ["published", "cancelled", "failed"];

/** Stores a new asset. */
export function insertAsset(db: Db, row: AssetRow): void {
  db.insert(assets).values(row).run();
}

/** An asset of a workspace (deleted ones are not found). */
export function findAsset(db: Db, workspaceId: string, id: string): AssetRow | undefined {
  return db
    .select()
    .from(assets)
    .where(and(eq(assets.workspaceId, workspaceId), eq(assets.id, id), isNull(assets.deletedAt)))
    .get();
}

/** An asset by id alone, deleted or not (the download route knows only the id). */
export function findAssetById(db: Db, id: string): AssetRow | undefined {
  return db.select().from(assets).where(eq(assets.id, id)).get();
}

/** One page (plus one row) of a workspace's assets, newest first. */
export function listAssets(db: Db, workspaceId: string, afterId: string | null, limit: number): AssetRow[] {
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
    .limit(limit + 1)
    .all();
}

/** Applies changes to an asset. */
export function updateAsset(db: Db, id: string, changes: Partial<AssetRow>): void {
  db.update(assets).set(changes).where(eq(assets.id, id)).run();
}

/** Ids of posts that are not over yet (drafts included) and attach the asset. */
export function livePostsUsingAsset(db: Db, workspaceId: string, assetId: string): string[] {
  return db
    .select({ id: posts.id })
    .from(posts)
    .where(
      and(
        eq(posts.workspaceId, workspaceId),
        sql`${posts.state} not in (${sql.join(
          TERMINAL_POST_STATES.map((s) => sql`${s}`),
          sql`, `,
        )})`,
        sql`exists (select 1 from json_each(${posts.assetItems}) where json_extract(value, '$.asset_id') = ${assetId})`,
      ),
    )
    .limit(10)
    .all()
    .map((r) => r.id);
}

/** Deleted assets whose bytes are still in the store (the cleanup job removes them). */
export function listDeletedAssetsWithBlobs(db: Db, limit: number): AssetRow[] {
  return db
    .select()
    .from(assets)
    .where(and(isNotNull(assets.deletedAt), isNotNull(assets.blobKey)))
    .limit(limit)
    .all();
}

/** Whether any asset row (deleted or not) claims this blob key. */
export function blobKeysInUse(db: Db, keys: string[]): Set<string> {
  if (keys.length === 0) return new Set();
  const fromAssets = db
    .select({ key: assets.blobKey })
    .from(assets)
    .where(inArray(assets.blobKey, keys))
    .all()
    .map((r) => r.key!);
  const fromUploads = db
    .select({ key: assetUploads.blobKey })
    .from(assetUploads)
    .where(and(inArray(assetUploads.blobKey, keys), inArray(assetUploads.status, ["pending", "completing"])))
    .all()
    .map((r) => r.key);
  return new Set([...fromAssets, ...fromUploads]);
}

/** Stores a new upload. */
export function insertUpload(db: Db, row: AssetUploadRow): void {
  db.insert(assetUploads).values(row).run();
}

/** An upload of a workspace. */
export function findUpload(db: Db, workspaceId: string, id: string): AssetUploadRow | undefined {
  return db
    .select()
    .from(assetUploads)
    .where(and(eq(assetUploads.workspaceId, workspaceId), eq(assetUploads.id, id)))
    .get();
}

/** An upload by id alone (the part route knows only the id). */
export function findUploadById(db: Db, id: string): AssetUploadRow | undefined {
  return db.select().from(assetUploads).where(eq(assetUploads.id, id)).get();
}

/** The newest upload of an asset. */
export function findLatestUploadForAsset(db: Db, assetId: string): AssetUploadRow | undefined {
  return db
    .select()
    .from(assetUploads)
    .where(eq(assetUploads.assetId, assetId))
    .orderBy(desc(assetUploads.id))
    .limit(1)
    .get();
}

/** Applies changes to an upload only while it is in one of `states` (compare-and-set); false otherwise. */
export function updateUploadInState(
  db: Db,
  id: string,
  states: AssetUploadRow["status"][],
  changes: Partial<AssetUploadRow>,
): boolean {
  return (
    db
      .update(assetUploads)
      .set(changes)
      .where(and(eq(assetUploads.id, id), inArray(assetUploads.status, states)))
      .returning({ id: assetUploads.id })
      .all().length === 1
  );
}

/**
 * Takes the completion lease of an upload: from `pending`, or from `completing` whose lease ran out
 * (the request holding it died). False when another request holds it or the upload is over.
 */
export function claimUploadCompletion(db: Db, id: string, now: number, leaseUntil: number): boolean {
  return (
    db
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
      .returning({ id: assetUploads.id })
      .all().length === 1
  );
}

/** Uploads past their expiry that never completed (pending, or a completion that died). */
export function listExpiredUploads(db: Db, now: number, limit: number): AssetUploadRow[] {
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
    .limit(limit)
    .all();
}

/** Store upload ids Herald still waits on (pending or completing uploads). */
export function liveStoreUploadIds(db: Db, storeUploadIds: string[]): Set<string> {
  if (storeUploadIds.length === 0) return new Set();
  return new Set(
    db
      .select({ id: assetUploads.storeUploadId })
      .from(assetUploads)
      .where(
        and(
          inArray(assetUploads.storeUploadId, storeUploadIds),
          inArray(assetUploads.status, ["pending", "completing"]),
        ),
      )
      .all()
      .map((r) => r.id),
  );
}

/** Reserved assets that will never get their bytes: their upload expired or failed, and no live post uses them. */
export function listAbandonedPendingAssets(db: Db, limit: number): AssetRow[] {
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
    .limit(limit)
    .all();
}
