// Tables of the assets capability: media files and their multipart uploads.
import type { TableBuilders } from "./builders.ts";
import type { AccountTables } from "./accounts.ts";

/** The asset tables. */
export function defineAssetTables(b: TableBuilders, { workspaces }: Pick<AccountTables, "workspaces">) {
  /** Media files; the upload flow (asset uploads, blobs) builds on this table. */
  const assets = b.table(
    "assets",
    {
      id: b.text("id").primaryKey(),
      workspaceId: b
        .text("workspace_id")
        .notNull()
        .references(() => workspaces.id),
      type: b.text("type", { enum: ["card", "video", "poster"] }).notNull(),
      label: b.text("label").notNull(),
      contentType: b.text("content_type").notNull(),
      byteSize: b.integer("byte_size").notNull(),
      width: b.integer("width"),
      height: b.integer("height"),
      durationSec: b.integer("duration_sec"),
      status: b.text("status", { enum: ["pending_upload", "ready"] }).notNull(),
      /** Key of the object in the blob store; null once a deleted asset's bytes are gone. */
      blobKey: b.text("blob_key"),
      /** Base64 CRC64NVME of the whole object (set when the upload completes). */
      checksum: b.text("checksum"),
      /** Layout name from the aspect ratio (`x-landscape`, `square`, …; docs/decisions.md). */
      format: b.text("format"),
      inspectedAt: b.integer("inspected_at"),
      createdAt: b.integer("created_at").notNull(),
      deletedAt: b.integer("deleted_at"),
    },
    (t) => [b.index("assets_workspace").on(t.workspaceId, t.id), b.index("assets_blob_key").on(t.blobKey)],
  );

  /**
   * Multipart uploads of assets. `pending` takes parts until `expires_at`; `completing` while one
   * request assembles it (`lease_until` lets a crashed completion be retried); then `completed`, or
   * `failed` (the bytes are not a usable file) or `expired` (cleaned up by the assets-cleanup job).
   */
  const assetUploads = b.table(
    "asset_uploads",
    {
      id: b.text("id").primaryKey(),
      workspaceId: b.text("workspace_id").notNull(),
      assetId: b.text("asset_id").notNull(),
      /** Backend that holds the parts (`local` or `s3`), so a changed HERALD_STORAGE is noticed. */
      storage: b.text("storage", { enum: ["local", "s3"] }).notNull(),
      blobKey: b.text("blob_key").notNull(),
      /** The store's own multipart upload id. */
      storeUploadId: b.text("store_upload_id").notNull(),
      byteSize: b.integer("byte_size").notNull(),
      partSize: b.integer("part_size").notNull(),
      /** Declared base64 CRC64NVME of each part, in part-number order. */
      partChecksums: b.json("part_checksums").$type<string[]>().notNull(),
      status: b
        .text("status", { enum: ["pending", "completing", "completed", "failed", "expired"] })
        .notNull(),
      leaseUntil: b.integer("lease_until"),
      /** Why a failed upload cannot be completed. */
      failure: b.text("failure"),
      expiresAt: b.integer("expires_at").notNull(),
      createdAt: b.integer("created_at").notNull(),
      completedAt: b.integer("completed_at"),
    },
    (t) => [
      b.index("asset_uploads_status").on(t.status, t.expiresAt),
      b.index("asset_uploads_asset").on(t.assetId),
    ],
  );
  return { assets, assetUploads };
}
