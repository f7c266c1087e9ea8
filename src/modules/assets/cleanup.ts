import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import {
  blobKeysInUse,
  listAbandonedPendingAssets,
  listDeletedAssetsWithBlobs,
  listExpiredUploads,
  livePostsUsingAsset,
  liveStoreUploadIds,
  updateAsset,
  updateUploadInState,
} from "./repo.ts";
import { removeAssetBytes } from "./service.ts";

/**
 * How old a store object or multipart upload that the database does not know must be before it is
 * removed: a request may have created it and not yet recorded it.
 */
export const ORPHAN_GRACE_MS = 60 * 60 * 1000;
const BATCH = 500;

/** What one cleanup run did (for logs and tests). */
export interface CleanupReport {
  expired_uploads: number;
  abandoned_assets: number;
  deleted_blobs: number;
  orphan_uploads: number;
  orphan_objects: number;
  temp_files: number;
}

/**
 * The assets-cleanup job: expired uploads lose their parts, reserved assets whose upload is gone are
 * deleted (unless a live post still waits on them), deleted assets lose their bytes, and anything in
 * the store that no row claims (a crash between the store and the database) is removed after a
 * grace period. Store times are wall-clock times, so the grace uses the wall clock.
 */
export async function cleanupAssets(h: Herald, options: { graceMs?: number } = {}): Promise<CleanupReport> {
  const now = h.clock.now();
  const grace = options.graceMs ?? ORPHAN_GRACE_MS;
  const report: CleanupReport = {
    expired_uploads: 0,
    abandoned_assets: 0,
    deleted_blobs: 0,
    orphan_uploads: 0,
    orphan_objects: 0,
    temp_files: 0,
  };

  for (const upload of await listExpiredUploads(h.db, now, BATCH)) {
    if (upload.storage === h.blobs.kind) await h.blobs.abortMultipart(upload.blobKey, upload.storeUploadId);
    const expired = await inTransaction(h.db, (tx) =>
      updateUploadInState(tx, upload.id, ["pending", "completing"], { status: "expired", leaseUntil: null }),
    );
    if (expired) report.expired_uploads++;
  }

  for (const asset of await listAbandonedPendingAssets(h.db, BATCH)) {
    if (await deleteAbandonedAsset(h, asset.workspaceId, asset.id, now)) report.abandoned_assets++;
  }

  for (const asset of await listDeletedAssetsWithBlobs(h.db, BATCH)) {
    await removeAssetBytes(h, asset);
    report.deleted_blobs++;
  }

  const cutoff = Date.now() - grace;
  const uploads: { key: string; uploadId: string; initiatedAt: number | null }[] = [];
  for await (const upload of h.blobs.listMultipart()) uploads.push(upload);
  const live = await liveStoreUploadIds(
    h.db,
    uploads.map((u) => u.uploadId),
  );
  for (const upload of uploads) {
    if (live.has(upload.uploadId) || (upload.initiatedAt ?? 0) > cutoff) continue;
    await h.blobs.abortMultipart(upload.key, upload.uploadId);
    report.orphan_uploads++;
  }

  let batch: { key: string; modifiedAt: number }[] = [];
  const sweep = async () => {
    const claimed = await blobKeysInUse(
      h.db,
      batch.map((o) => o.key),
    );
    for (const object of batch) {
      if (claimed.has(object.key) || object.modifiedAt > cutoff) continue;
      await h.blobs.delete(object.key);
      report.orphan_objects++;
    }
    batch = [];
  };
  for await (const object of h.blobs.list("")) {
    batch.push(object);
    if (batch.length >= BATCH) await sweep();
  }
  await sweep();

  if (h.blobs.sweepTemporary) report.temp_files = await h.blobs.sweepTemporary(cutoff);
  if (Object.values(report).some((n) => n > 0)) h.logger.info("assets cleanup", { ...report });
  return report;
}

/**
 * Deletes a reserved asset that will never get its bytes, unless a live post uses it (that post
 * shows assets_not_ready at its time). The check and the delete share one transaction, so a post
 * attaching the asset meanwhile keeps it.
 */
async function deleteAbandonedAsset(h: Herald, workspaceId: string, assetId: string, now: number) {
  return inTransaction(h.db, async (tx) => {
    if ((await livePostsUsingAsset(tx, workspaceId, assetId)).length > 0) return false;
    await updateAsset(tx, assetId, { deletedAt: now });
    return true;
  });
}
