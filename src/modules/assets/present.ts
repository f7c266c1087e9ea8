import { iso } from "../../lib/clock.ts";
import type { AssetRow, AssetUploadRow } from "./repo.ts";

/** A signed download link and when it stops working. */
export interface DownloadLink {
  url: string;
  expiresAt: number;
}

/**
 * The asset resource. Values only inspection knows (dimensions, duration, format, checksum,
 * inspected_at) are null while the asset is `pending_upload`.
 */
export function presentAsset(row: AssetRow, download?: DownloadLink) {
  const measured = row.width !== null && row.height !== null;
  return {
    id: row.id,
    object: "asset" as const,
    type: row.type,
    label: row.label,
    dimensions: measured ? `${row.width}x${row.height}` : null,
    width: row.width,
    height: row.height,
    duration_sec: row.durationSec,
    format: row.format,
    byte_size: row.byteSize,
    content_type: row.contentType,
    status: row.status,
    checksum: row.checksum ? { algorithm: "crc64nvme", value: row.checksum } : null,
    inspected_at: iso(row.inspectedAt),
    retention: { policy: "workspace_managed", reusable: true },
    created_at: iso(row.createdAt),
    ...(download ? { download_url: download.url, download_url_expires_at: iso(download.expiresAt) } : {}),
  };
}

/** One part of an upload as the client sees it. */
export interface PartInstruction {
  part_number: number;
  upload_url: string;
  required_headers: Record<string, string>;
}

/** The asset upload resource. */
export function presentUpload(row: AssetUploadRow, parts: PartInstruction[]) {
  return {
    id: row.id,
    object: "asset_upload" as const,
    asset_id: row.assetId,
    protocol: "multipart" as const,
    part_size: row.partSize,
    parts,
    byte_size: row.byteSize,
    expires_at: iso(row.expiresAt),
  };
}
