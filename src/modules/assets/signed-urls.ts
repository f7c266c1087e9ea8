import type { Herald } from "../../herald.ts";

// Herald's own signed, expiring URLs (no bearer): part uploads and downloads on local storage.
// The HMAC (SecretBox, one key per purpose) covers what the URL addresses and its expiry, so
// changing any of them, or replaying a part URL as a download, fails the check.

const PART_PURPOSE = "asset-upload-part";
const DOWNLOAD_PURPOSE = "asset-download";

/** Why a signed URL was refused, or `ok`. */
export type SignedUrlCheck = "ok" | "invalid" | "expired";

function check(
  h: Herald,
  purpose: string,
  data: string,
  expires: string | undefined,
  signature: string | undefined,
): SignedUrlCheck {
  if (
    !expires ||
    !/^\d{1,12}$/.test(expires) ||
    !signature ||
    !h.secrets.verify(purpose, `${data}.${expires}`, signature)
  )
    return "invalid";
  return Number(expires) * 1000 <= h.clock.now() ? "expired" : "ok";
}

function seconds(ms: number): number {
  return Math.floor(ms / 1000);
}

/** `PUT <origin>/uploads/{upload_id}/parts/{n}?expires=…&signature=…`, valid until `expiresAt`. */
export function partUploadUrl(h: Herald, uploadId: string, partNumber: number, expiresAt: number): string {
  const expires = seconds(expiresAt);
  const signature = h.secrets.sign(PART_PURPOSE, `${uploadId}.${partNumber}.${expires}`);
  return `${h.config.baseUrl}/uploads/${uploadId}/parts/${partNumber}?expires=${expires}&signature=${signature}`;
}

/** Checks the query of a part upload URL against the upload id and part number of its path. */
export function checkPartUploadUrl(
  h: Herald,
  uploadId: string,
  partNumber: string,
  query: { expires?: string; signature?: string },
): SignedUrlCheck {
  return check(h, PART_PURPOSE, `${uploadId}.${partNumber}`, query.expires, query.signature);
}

/** `GET <origin>/downloads/{asset_id}?expires=…&signature=…`, valid until `expiresAt`. */
export function downloadUrl(h: Herald, assetId: string, expiresAt: number): string {
  const expires = seconds(expiresAt);
  const signature = h.secrets.sign(DOWNLOAD_PURPOSE, `${assetId}.${expires}`);
  return `${h.config.baseUrl}/downloads/${assetId}?expires=${expires}&signature=${signature}`;
}

/** Checks the query of a download URL against the asset id of its path. */
export function checkDownloadUrl(
  h: Herald,
  assetId: string,
  query: { expires?: string; signature?: string },
): SignedUrlCheck {
  return check(h, DOWNLOAD_PURPOSE, assetId, query.expires, query.signature);
}
