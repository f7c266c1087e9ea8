// Tables of the assets capability (uploads); the `assets` table itself is in schema.ts.
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * Multipart uploads of assets. `pending` takes parts until `expires_at`; `completing` while one
 * request assembles it (`lease_until` lets a crashed completion be retried); then `completed`, or
 * `failed` (the bytes are not a usable file) or `expired` (cleaned up by the assets-cleanup job).
 */
export const assetUploads = sqliteTable(
  "asset_uploads",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull(),
    assetId: text("asset_id").notNull(),
    /** Backend that holds the parts (`local` or `s3`), so a changed HERALD_STORAGE is noticed. */
    storage: text("storage", { enum: ["local", "s3"] }).notNull(),
    blobKey: text("blob_key").notNull(),
    /** The store's own multipart upload id. */
    storeUploadId: text("store_upload_id").notNull(),
    byteSize: integer("byte_size").notNull(),
    partSize: integer("part_size").notNull(),
    /** Declared base64 CRC64NVME of each part, in part-number order. */
    partChecksums: text("part_checksums", { mode: "json" }).$type<string[]>().notNull(),
    status: text("status", { enum: ["pending", "completing", "completed", "failed", "expired"] }).notNull(),
    leaseUntil: integer("lease_until"),
    /** Why a failed upload cannot be completed. */
    failure: text("failure"),
    expiresAt: integer("expires_at").notNull(),
    createdAt: integer("created_at").notNull(),
    completedAt: integer("completed_at"),
  },
  (t) => [
    index("asset_uploads_status").on(t.status, t.expiresAt),
    index("asset_uploads_asset").on(t.assetId),
  ],
);
