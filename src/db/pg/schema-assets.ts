// Tables of the assets capability (uploads); the `assets` table itself is in schema.ts.
// PostgreSQL twin of src/db/sqlite/schema-assets.ts.
import { bigint, index, pgTable, text } from "drizzle-orm/pg-core";
import { jsonText } from "./schema.ts";

/**
 * Multipart uploads of assets. `pending` takes parts until `expires_at`; `completing` while one
 * request assembles it (`lease_until` lets a crashed completion be retried); then `completed`, or
 * `failed` (the bytes are not a usable file) or `expired` (cleaned up by the assets-cleanup job).
 */
export const assetUploads = pgTable(
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
    byteSize: bigint("byte_size", { mode: "number" }).notNull(),
    partSize: bigint("part_size", { mode: "number" }).notNull(),
    /** Declared base64 CRC64NVME of each part, in part-number order. */
    partChecksums: jsonText<string[]>("part_checksums").notNull(),
    status: text("status", { enum: ["pending", "completing", "completed", "failed", "expired"] }).notNull(),
    leaseUntil: bigint("lease_until", { mode: "number" }),
    /** Why a failed upload cannot be completed. */
    failure: text("failure"),
    expiresAt: bigint("expires_at", { mode: "number" }).notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    completedAt: bigint("completed_at", { mode: "number" }),
  },
  (t) => [
    index("asset_uploads_status").on(t.status, t.expiresAt),
    index("asset_uploads_asset").on(t.assetId),
  ],
);
