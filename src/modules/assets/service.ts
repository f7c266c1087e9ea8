import { BlobError } from "../../blobs/store.ts";
import { newId } from "../../db/ids.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { auditActorOf, type Actor } from "../../core/actor.ts";
import { invalid, notFound, ProblemError, type FieldError } from "../../core/problem.ts";
import {
  combineCrc64Nvme,
  createCrc64Nvme,
  crc64nvmeFromBase64,
  crc64nvmeToBase64,
} from "../../lib/crc64nvme.ts";
import { recordAudit } from "../audit/repo.ts";
import type { WorkspaceRow } from "../workspaces/repo.ts";
import {
  canonicalContentType,
  contentTypeFitsKind,
  formatFor,
  inspectBlob,
  InspectionError,
  sameMediaFamily,
} from "./inspect.ts";
import { MAX_ASSET_BYTES, partCountFor, partLength, partSizeFor } from "./parts.ts";
import { presentAsset, presentUpload, type DownloadLink, type PartInstruction } from "./present.ts";
import {
  claimUploadCompletion,
  findAsset,
  findAssetById,
  findLatestUploadForAsset,
  findUpload,
  findUploadById,
  insertAsset,
  insertUpload,
  listAssets,
  livePostsUsingAsset,
  updateAsset,
  updateUploadInState,
  type AssetRow,
  type AssetUploadRow,
} from "./repo.ts";
import {
  checkDownloadUrl,
  checkPartUploadUrl,
  downloadUrl,
  partUploadUrl,
  type SignedUrlCheck,
} from "./signed-urls.ts";

/** How long an upload (and each of its part URLs) stays open. */
export const UPLOAD_TTL_MS = 24 * 60 * 60 * 1000;
/** How long a download URL works (the contract: five minutes). */
export const DOWNLOAD_TTL_MS = 5 * 60 * 1000;
/** How long one completion may hold an upload before another request may take over. */
const COMPLETION_LEASE_MS = 15 * 60 * 1000;

/** An instant rounded down to a whole second (signed URLs carry seconds, responses show the same instant). */
function wholeSecond(ms: number): number {
  return Math.floor(ms / 1000) * 1000;
}

function badRequest(detail: string, errors: FieldError[]): ProblemError {
  return new ProblemError("public_invalid_request", detail, { errors });
}

// ---- create --------------------------------------------------------------------------------------

/** Body of POST …/asset-uploads. */
export interface CreateUploadInput {
  kind: "card" | "video" | "poster";
  file_name: string;
  content_type: string;
  byte_size: number;
  part_size?: number;
  parts: { part_number: number; checksum_crc64nvme: string }[];
}

/** Checks an upload request beyond its schema: media type, size, the part rule, part numbers, checksums. */
function uploadRequestErrors(input: CreateUploadInput): {
  errors: FieldError[];
  partSize: number;
  partCount: number;
  contentType: string;
} {
  const errors: FieldError[] = [];
  const contentType = canonicalContentType(input.content_type);
  if (!contentTypeFitsKind(input.kind, contentType)) {
    errors.push({
      pointer: "/content_type",
      code: "custom",
      detail:
        input.kind === "video"
          ? "a video asset must be video/mp4 or video/quicktime"
          : `a ${input.kind} asset must be image/png, image/jpeg, image/gif or image/webp`,
    });
  }
  if (input.byte_size > MAX_ASSET_BYTES)
    errors.push({
      pointer: "/byte_size",
      code: "custom",
      detail: `must be at most ${MAX_ASSET_BYTES} bytes (10,000 parts of 64 MiB)`,
    });
  const partSize = partSizeFor(input.byte_size);
  const partCount = partCountFor(input.byte_size, partSize);
  if (input.part_size !== undefined && input.part_size !== partSize) {
    errors.push({
      pointer: "/part_size",
      code: "custom",
      detail:
        `must be ${partSize} for ${input.byte_size} bytes: 5,242,880, or the smallest multiple of ` +
        `1 MiB that fits in 10,000 parts`,
    });
  }
  const tooLarge = input.byte_size > MAX_ASSET_BYTES;
  if (!tooLarge && input.parts.length !== partCount) {
    errors.push({
      pointer: "/parts",
      code: "custom",
      detail:
        `${input.byte_size} bytes in parts of ${partSize} make ${partCount} ` +
        `part${partCount === 1 ? "" : "s"}, not ${input.parts.length}; every part but the last is exactly ${partSize} bytes`,
    });
  }
  // Part numbers are checked once the count is right (a wrong count already says what to fix).
  const countOk = !tooLarge && input.parts.length === partCount;
  const seen = new Set<number>();
  input.parts.forEach((part, i) => {
    if (countOk && part.part_number > partCount)
      errors.push({
        pointer: `/parts/${i}/part_number`,
        code: "custom",
        detail: `must be from 1 to ${partCount} (each part once)`,
      });
    else if (countOk && seen.has(part.part_number))
      errors.push({
        pointer: `/parts/${i}/part_number`,
        code: "custom",
        detail: `part ${part.part_number} is listed twice`,
      });
    seen.add(part.part_number);
    if (crc64nvmeFromBase64(part.checksum_crc64nvme) === null) {
      errors.push({
        pointer: `/parts/${i}/checksum_crc64nvme`,
        code: "custom",
        detail: "must be a CRC64NVME: base64 of 8 big-endian bytes, like rosUhgp5mIg=",
      });
    }
  });
  return { errors, partSize, partCount, contentType };
}

/** Where the client sends each part and with which headers. */
async function partInstructions(h: Herald, upload: AssetUploadRow): Promise<PartInstruction[]> {
  const now = h.clock.now();
  const count = upload.partChecksums.length;
  const parts: PartInstruction[] = [];
  for (let n = 1; n <= count; n++) {
    const times = { now, expiresAt: upload.expiresAt };
    const checksum = upload.partChecksums[n - 1]!;
    const target = await h.blobs.partTarget(upload.blobKey, upload.storeUploadId, n, times, checksum);
    parts.push(
      target
        ? { part_number: n, upload_url: target.url, required_headers: target.headers }
        : {
            part_number: n,
            upload_url: partUploadUrl(h, upload.id, n, upload.expiresAt),
            required_headers: {},
          },
    );
  }
  return parts;
}

/**
 * Starts a multipart upload: validates the request, starts it in the store, reserves the asset
 * (`pending_upload`) and returns the upload with one URL per part.
 */
export async function createUpload(args: {
  h: Herald;
  actor: Actor;
  workspace: WorkspaceRow;
  input: CreateUploadInput;
}) {
  const { h, actor, workspace, input } = args;
  const { errors, partSize, contentType } = uploadRequestErrors(input);
  if (errors.length) throw badRequest("The upload request does not describe a file Herald can take.", errors);
  const now = h.clock.now();
  const assetId = newId("ast");
  const blobKey = `${workspace.id}/${assetId}`;
  // An upload started in the store but never recorded here (crash in between) is aborted by the cleanup job.
  const storeUploadId = await h.blobs.createMultipart(blobKey, { contentType, byteSize: input.byte_size });
  const checksums = [...input.parts]
    .sort((a, b) => a.part_number - b.part_number)
    .map((p) => p.checksum_crc64nvme);
  const upload: AssetUploadRow = {
    id: newId("upl"),
    workspaceId: workspace.id,
    assetId,
    storage: h.blobs.kind,
    blobKey,
    storeUploadId,
    byteSize: input.byte_size,
    partSize,
    partChecksums: checksums,
    status: "pending",
    leaseUntil: null,
    failure: null,
    expiresAt: wholeSecond(now + UPLOAD_TTL_MS),
    createdAt: now,
    completedAt: null,
  };
  await inTransaction(h.db, async (tx) => {
    await insertAsset(tx, {
      id: assetId,
      workspaceId: workspace.id,
      type: input.kind,
      label: input.file_name,
      contentType,
      byteSize: input.byte_size,
      width: null,
      height: null,
      durationSec: null,
      status: "pending_upload",
      blobKey,
      checksum: null,
      format: null,
      inspectedAt: null,
      createdAt: now,
      deletedAt: null,
    });
    await insertUpload(tx, upload);
    await recordAudit(
      tx,
      auditActorOf(actor),
      { action: "asset.upload_started", workspaceId: workspace.id, targetType: "asset", targetId: assetId },
      now,
    );
  });
  return presentUpload(upload, await partInstructions(h, upload));
}

// ---- part upload (local storage) -----------------------------------------------------------------

function refusedUrl(check: Exclude<SignedUrlCheck, "ok">, what: string): ProblemError {
  const detail =
    check === "expired"
      ? `This ${what} URL has expired.`
      : `This ${what} URL is not valid: its signature does not match (was it changed or cut short?).`;
  return new ProblemError("public_authentication_required", detail, {
    headers: { "www-authenticate": 'Signature realm="herald-signed-url"' },
    userAction: "check_request",
  });
}

/**
 * Stores one part sent to Herald's signed part URL: the signature and expiry are checked, the body
 * streams to disk with its CRC64NVME computed on the way, and a part whose size or checksum differs
 * from what the upload declared is refused (400) with nothing kept. Re-sending a part replaces it.
 */
export async function receivePart(
  h: Herald,
  uploadId: string,
  partNumberText: string,
  query: { expires?: string; signature?: string },
  request: Request,
) {
  const check = checkPartUploadUrl(h, uploadId, partNumberText, query);
  if (check !== "ok") throw refusedUrl(check, "part upload");
  const upload = await findUploadById(h.db, uploadId);
  const receive = h.blobs.receivePart?.bind(h.blobs);
  if (!upload || upload.storage !== h.blobs.kind || !receive) throw notFound("upload");
  const partNumber = Number(partNumberText);
  if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > upload.partChecksums.length)
    throw notFound("part");
  if (upload.status !== "pending")
    throw new ProblemError(
      "public_conflict",
      `This upload is ${upload.status === "completing" ? "being completed" : upload.status}; it takes no more parts.`,
    );
  const size = partLength(upload.byteSize, upload.partSize, partNumber);
  const declaredLength = request.headers.get("content-length");
  if (declaredLength !== null && Number(declaredLength) !== size) {
    throw invalid(
      "",
      `part ${partNumber} must be exactly ${size} bytes; Content-Length says ${declaredLength}`,
      "Content-Length",
    );
  }
  if (!request.body)
    throw invalid("", `part ${partNumber} must be exactly ${size} bytes; the request has no body`);
  const expected = {
    size,
    crc64nvme: crc64nvmeFromBase64(upload.partChecksums[partNumber - 1]!)!,
    offset: (partNumber - 1) * upload.partSize,
  };
  try {
    const stored = await receive(upload.blobKey, upload.storeUploadId, partNumber, request.body, expected);
    return {
      object: "asset_upload_part" as const,
      upload_id: upload.id,
      part_number: partNumber,
      etag: stored.etag,
      byte_size: stored.size,
      checksum_crc64nvme: upload.partChecksums[partNumber - 1]!,
    };
  } catch (error) {
    if (error instanceof BlobError && error.code === "checksum_mismatch") {
      throw invalid(
        "",
        `part ${partNumber} does not match the CRC64NVME declared for it ` +
          `(${upload.partChecksums[partNumber - 1]}); it was not kept. Send the part again.`,
      );
    }
    if (error instanceof BlobError && error.code === "size_mismatch")
      throw invalid("", `${error.message}; it was not kept`);
    if (error instanceof BlobError && error.code === "not_found")
      throw new ProblemError("public_conflict", "This upload takes no more parts.");
    throw error;
  }
}

// ---- complete ------------------------------------------------------------------------------------

/** Body of POST …/asset-uploads/{id}/complete. */
export interface CompleteUploadInput {
  byte_size: number;
  checksum_crc64nvme: string;
  parts: { part_number: number; etag: string; checksum_crc64nvme: string }[];
}

/** The completion request against what the upload declared: sizes, part list, part and whole checksums. */
function completionRequestErrors(upload: AssetUploadRow, input: CompleteUploadInput): FieldError[] {
  const errors: FieldError[] = [];
  const count = upload.partChecksums.length;
  if (input.byte_size !== upload.byteSize)
    errors.push({
      pointer: "/byte_size",
      code: "custom",
      detail: `the upload was declared with ${upload.byteSize} bytes`,
    });
  const seen = new Set<number>();
  input.parts.forEach((part, i) => {
    if (part.part_number > count)
      errors.push({
        pointer: `/parts/${i}/part_number`,
        code: "custom",
        detail: `the upload has parts 1 to ${count}`,
      });
    else if (seen.has(part.part_number))
      errors.push({
        pointer: `/parts/${i}/part_number`,
        code: "custom",
        detail: `part ${part.part_number} is listed twice`,
      });
    else if (part.checksum_crc64nvme !== upload.partChecksums[part.part_number - 1]) {
      errors.push({
        pointer: `/parts/${i}/checksum_crc64nvme`,
        code: "custom",
        detail: `part ${part.part_number} was declared with ${upload.partChecksums[part.part_number - 1]}`,
      });
    }
    seen.add(part.part_number);
  });
  const missing = Array.from({ length: count }, (_, i) => i + 1).filter((n) => !seen.has(n));
  if (missing.length)
    errors.push({
      pointer: "/parts",
      code: "custom",
      detail: `part${missing.length === 1 ? "" : "s"} ${abbreviate(missing)} missing from the list`,
    });
  const whole = wholeChecksum(upload);
  if (input.checksum_crc64nvme !== crc64nvmeToBase64(whole)) {
    errors.push({
      pointer: "/checksum_crc64nvme",
      code: "custom",
      detail: "is not the CRC64NVME of the whole file (the combination of the declared part checksums)",
    });
  }
  return errors;
}

function abbreviate(numbers: number[]): string {
  return numbers.length > 10
    ? `${numbers.slice(0, 10).join(", ")} and ${numbers.length - 10} more`
    : numbers.join(", ");
}

/** The whole-object CRC64NVME, combined from the declared part checksums. */
function wholeChecksum(upload: AssetUploadRow): bigint {
  let whole = 0n;
  upload.partChecksums.forEach((checksum, i) => {
    const part = crc64nvmeFromBase64(checksum)!;
    whole =
      i === 0 ? part : combineCrc64Nvme(whole, part, partLength(upload.byteSize, upload.partSize, i + 1));
  });
  return whole;
}

/** The upload cannot be completed; the reason is kept and the client must start a new upload. */
class UploadFailed extends Error {}

/**
 * Reads the assembled object back and checks every part's CRC64NVME (for a store that took the
 * parts directly without checking their checksums). Throws UploadFailed naming the bad parts.
 */
async function verifyStoredObject(h: Herald, upload: AssetUploadRow): Promise<void> {
  const crc = await createCrc64Nvme();
  const bad: number[] = [];
  let part = 1;
  let left = partLength(upload.byteSize, upload.partSize, 1);
  let total = 0;
  const endPart = () => {
    if (crc.digest() !== crc64nvmeFromBase64(upload.partChecksums[part - 1]!)) bad.push(part);
    crc.reset();
    part++;
    left = part <= upload.partChecksums.length ? partLength(upload.byteSize, upload.partSize, part) : 0;
  };
  for await (const chunk of await h.blobs.read(upload.blobKey)) {
    total += chunk.byteLength;
    let offset = 0;
    while (offset < chunk.byteLength && left > 0) {
      const take = Math.min(left, chunk.byteLength - offset);
      crc.update(chunk.subarray(offset, offset + take));
      offset += take;
      left -= take;
      if (left === 0) endPart();
    }
  }
  if (total !== upload.byteSize)
    throw new UploadFailed(`the stored file has ${total} bytes, not ${upload.byteSize}`);
  if (bad.length)
    throw new UploadFailed(
      `part${bad.length === 1 ? "" : "s"} ${abbreviate(bad)} stored by the bucket ` +
        `do${bad.length === 1 ? "es" : ""} not match the declared CRC64NVME`,
    );
}

/** Assembles the parts into the object (or finds it assembled by an earlier attempt that died). */
async function assemble(h: Herald, upload: AssetUploadRow, input: CompleteUploadInput): Promise<void> {
  let stored;
  try {
    stored = new Map(
      (await h.blobs.listParts(upload.blobKey, upload.storeUploadId)).map((p) => [p.partNumber, p]),
    );
  } catch (error) {
    if (!(error instanceof BlobError && error.code === "not_found")) throw error;
    // The store no longer has the multipart upload: an earlier attempt assembled it and died before
    // recording that. Accept the object only after reading it back.
    if ((await h.blobs.stat(upload.blobKey))?.size !== upload.byteSize) {
      throw new UploadFailed("the store no longer holds this upload's parts");
    }
    await verifyStoredObject(h, upload);
    return;
  }
  const errors: FieldError[] = [];
  const missing: number[] = [];
  input.parts.forEach((part, i) => {
    const found = stored.get(part.part_number);
    const size = partLength(upload.byteSize, upload.partSize, part.part_number);
    if (!found) missing.push(part.part_number);
    else if (found.etag.replace(/"/g, "") !== part.etag.replace(/"/g, ""))
      errors.push({
        pointer: `/parts/${i}/etag`,
        code: "custom",
        detail: `part ${part.part_number} is stored with ETag ${found.etag}; send the ETag of its latest upload`,
      });
    else if (found.size !== size)
      errors.push({
        pointer: `/parts/${i}`,
        code: "custom",
        detail: `part ${part.part_number} is stored with ${found.size} bytes; it must have ${size}. Send it again.`,
      });
  });
  if (missing.length)
    errors.unshift({
      pointer: "/parts",
      code: "custom",
      detail:
        `part${missing.length === 1 ? "" : "s"} ${abbreviate(missing)} ` +
        `${missing.length === 1 ? "has" : "have"} not been uploaded; send ` +
        `${missing.length === 1 ? "it" : "them"} and complete again`,
    });
  if (errors.length)
    throw badRequest("The upload is not complete as described; nothing was assembled.", errors);
  const ordered = [...input.parts].sort((a, b) => a.part_number - b.part_number);
  const parts = ordered.map((p) => ({
    partNumber: p.part_number,
    etag: stored.get(p.part_number)!.etag,
    crc64nvme: upload.partChecksums[p.part_number - 1]!,
  }));
  let verified: boolean;
  try {
    const whole = input.checksum_crc64nvme;
    ({ verified } = await h.blobs.completeMultipart(upload.blobKey, upload.storeUploadId, parts, whole));
  } catch (error) {
    // A part that no longer matches its checksum was dropped by the store: the client sends it again.
    if (error instanceof BlobError && error.code === "checksum_mismatch")
      throw badRequest("A stored part is damaged; nothing was assembled.", [
        { pointer: "/parts", code: "custom", detail: error.message },
      ]);
    throw error;
  }
  // Local disk and a bucket that checks checksums verified every part as it arrived (S3 and MinIO
  // against the signed x-amz-checksum-crc64nvme); a store that ignores checksums did not.
  if (!verified) await verifyStoredObject(h, upload);
}

/**
 * Completes an upload: checks the part list, ETags, sizes and checksums, assembles the object
 * atomically, inspects it and makes the asset `ready`. A request that fails for a reason the client
 * can fix (a missing part, a wrong ETag or checksum, a store error) leaves the upload as it was, so
 * it can be completed again; an upload whose bytes are not a usable file fails for good.
 */
export async function completeUpload(args: {
  h: Herald;
  actor: Actor;
  workspaceId: string;
  uploadId: string;
  input: CompleteUploadInput;
}): Promise<AssetRow> {
  const { h, actor, workspaceId, uploadId, input } = args;
  const upload = await findUpload(h.db, workspaceId, uploadId);
  if (!upload) throw notFound("upload");
  if (upload.status === "completed") return sameCompletion(h, workspaceId, upload, input);
  const now = h.clock.now();
  requireCompletable(h, upload, input, now);
  await claimCompletion(h, upload, now);
  const completion = completionOf(h, upload);
  const inspection = await assembleAndInspect(h, upload, input, completion);
  const ready = await markAssetReady({ h, actor, workspaceId, upload, input, inspection });
  if (!ready) {
    // The asset was deleted while its bytes were being assembled: they go too.
    await h.blobs.delete(upload.blobKey).catch(() => {});
    await completion.leave({ status: "expired", leaseUntil: null });
    throw notFound("asset");
  }
  return ready;
}

/** A completed upload completes again (a retried request) only with the same checksum and size. */
async function sameCompletion(
  h: Herald,
  workspaceId: string,
  upload: AssetUploadRow,
  input: CompleteUploadInput,
): Promise<AssetRow> {
  const asset = await findAsset(h.db, workspaceId, upload.assetId);
  if (asset && asset.checksum === input.checksum_crc64nvme && asset.byteSize === input.byte_size)
    return asset;
  throw new ProblemError(
    "public_conflict",
    "This upload was already completed with another checksum or size.",
  );
}

/** 409 for a failed or expired upload or one in another storage; 400 when the request does not match it. */
function requireCompletable(
  h: Herald,
  upload: AssetUploadRow,
  input: CompleteUploadInput,
  now: number,
): void {
  if (upload.status === "failed")
    throw new ProblemError(
      "public_conflict",
      `This upload failed and cannot be completed (${upload.failure}); start a new upload.`,
    );
  if (upload.status === "expired" || upload.expiresAt <= now)
    throw new ProblemError("public_conflict", "This upload has expired; start a new upload.");
  const errors = completionRequestErrors(upload, input);
  if (errors.length) throw badRequest("The completion does not match the upload.", errors);
  if (upload.storage !== h.blobs.kind) {
    throw new ProblemError(
      "public_conflict",
      `This upload went to ${upload.storage} storage, but Herald now uses ${h.blobs.kind}; start a new upload.`,
    );
  }
}

/** Moves the upload to `completing` under a lease; 409 (retry later) when another request holds it. */
async function claimCompletion(h: Herald, upload: AssetUploadRow, now: number): Promise<void> {
  const claimed = await inTransaction(h.db, (tx) =>
    claimUploadCompletion(tx, upload.id, now, now + COMPLETION_LEASE_MS),
  );
  if (!claimed) {
    throw new ProblemError(
      "public_conflict",
      "Another request is completing this upload right now; fetch the asset in a moment.",
      { retrySafety: "safe", retryAfter: 5 },
    );
  }
}

/** The ways out of `completing`. */
interface Completion {
  /** Moves the upload out of `completing` (a write: the non-transaction handle is read-only). */
  leave(changes: Partial<AssetUploadRow>): Promise<unknown>;
  /** The bytes cannot be used: they go, the upload fails, and the caller is told why (400). */
  fail(reason: string): Promise<never>;
}

function completionOf(h: Herald, upload: AssetUploadRow): Completion {
  const leave = (changes: Partial<AssetUploadRow>) =>
    inTransaction(h.db, (tx) => updateUploadInState(tx, upload.id, ["completing"], changes));
  const fail = async (reason: string): Promise<never> => {
    await h.blobs.delete(upload.blobKey).catch(() => {});
    await h.blobs.abortMultipart(upload.blobKey, upload.storeUploadId).catch(() => {});
    await leave({ status: "failed", failure: reason, leaseUntil: null });
    throw badRequest(`The uploaded file cannot be used: ${reason}. Start a new upload.`, [
      { pointer: "", code: "custom", detail: reason },
    ]);
  };
  return { leave, fail };
}

/**
 * Assembles the parts and inspects the file, which must be of the declared media family. Unusable
 * bytes fail the upload; any other error returns it to `pending` (the client may complete again).
 */
async function assembleAndInspect(
  h: Herald,
  upload: AssetUploadRow,
  input: CompleteUploadInput,
  completion: Completion,
) {
  const declared = (await findAssetById(h.db, upload.assetId))!;
  let inspection;
  try {
    await assemble(h, upload, input);
    inspection = await inspectBlob(
      h.blobs,
      upload.blobKey,
      upload.byteSize,
      declared.type === "video" ? "video" : "image",
    );
  } catch (error) {
    if (error instanceof UploadFailed || error instanceof InspectionError)
      return completion.fail(error.message);
    await completion.leave({ status: "pending", leaseUntil: null });
    throw error;
  }
  if (!sameMediaFamily(declared.contentType, inspection.contentType)) {
    return completion.fail(
      `the file is ${inspection.contentType}, but the upload declared ${declared.contentType}`,
    );
  }
  return inspection;
}

/** The asset becomes ready and the upload completed, with its audit record; null if it was deleted meanwhile. */
async function markAssetReady(args: {
  h: Herald;
  actor: Actor;
  workspaceId: string;
  upload: AssetUploadRow;
  input: CompleteUploadInput;
  inspection: Awaited<ReturnType<typeof inspectBlob>>;
}): Promise<AssetRow | null> {
  const { h, actor, workspaceId, upload, input, inspection } = args;
  const finishedAt = h.clock.now();
  return inTransaction(h.db, async (tx) => {
    const asset = await findAssetById(tx, upload.assetId);
    if (!asset || asset.deletedAt !== null) return null;
    await updateAsset(tx, asset.id, {
      status: "ready",
      width: inspection.width,
      height: inspection.height,
      durationSec: inspection.durationSec,
      format: formatFor(inspection.width, inspection.height),
      checksum: input.checksum_crc64nvme,
      inspectedAt: finishedAt,
    });
    await updateUploadInState(tx, upload.id, ["completing"], {
      status: "completed",
      completedAt: finishedAt,
      leaseUntil: null,
    });
    await recordAudit(
      tx,
      auditActorOf(actor),
      { action: "asset.uploaded", workspaceId, targetType: "asset", targetId: asset.id },
      finishedAt,
    );
    return (await findAssetById(tx, asset.id))!;
  });
}

// ---- read, list, delete, download ----------------------------------------------------------------

/** An asset of the workspace, or 404. */
export async function requireAsset(h: Herald, workspaceId: string, id: string): Promise<AssetRow> {
  const asset = await findAsset(h.db, workspaceId, id);
  if (!asset) throw notFound("asset");
  return asset;
}

/** A five-minute download link of a ready asset (the bucket's presigned GET, or Herald's signed route). */
export async function downloadLink(h: Herald, asset: AssetRow): Promise<DownloadLink | undefined> {
  if (asset.status !== "ready" || !asset.blobKey) return undefined;
  const now = h.clock.now();
  const expiresAt = wholeSecond(now + DOWNLOAD_TTL_MS);
  const direct = await h.blobs.downloadUrl(asset.blobKey, {
    now,
    expiresAt,
    fileName: asset.label,
    contentType: asset.contentType,
  });
  return { url: direct ?? downloadUrl(h, asset.id, expiresAt), expiresAt };
}

/** The asset resource, with a download link when asked for. */
export async function assetResource(h: Herald, asset: AssetRow, includeDownload: boolean) {
  return presentAsset(asset, includeDownload ? await downloadLink(h, asset) : undefined);
}

/** One page (plus one row) of a workspace's assets. */
export function pageOfAssets(
  h: Herald,
  workspaceId: string,
  afterId: string | null,
  limit: number,
): Promise<AssetRow[]> {
  return listAssets(h.db, workspaceId, afterId, limit);
}

/**
 * Deletes an asset: refused (409) while a post that is not over yet uses it; otherwise it disappears
 * from the API at once and its bytes are removed (by the cleanup job if the store is unreachable now).
 */
export async function deleteAsset(args: {
  h: Herald;
  actor: Actor;
  workspaceId: string;
  id: string;
}): Promise<AssetRow> {
  const { h, actor, workspaceId, id } = args;
  const now = h.clock.now();
  const asset = await inTransaction(h.db, async (tx) => {
    const row = await findAsset(tx, workspaceId, id);
    if (!row) throw notFound("asset");
    const users = await livePostsUsingAsset(tx, workspaceId, id);
    if (users.length) {
      throw new ProblemError(
        "public_conflict",
        `The asset is attached to post${users.length === 1 ? "" : "s"} ${users.join(", ")} that ` +
          `${users.length === 1 ? "is" : "are"} not finished; cancel or publish ${users.length === 1 ? "it" : "them"} first.`,
      );
    }
    await updateAsset(tx, id, { deletedAt: now });
    await recordAudit(
      tx,
      auditActorOf(actor),
      { action: "asset.deleted", workspaceId, targetType: "asset", targetId: id },
      now,
    );
    return row;
  });
  await removeAssetBytes(h, asset);
  return asset;
}

/**
 * Removes a deleted asset's bytes (and an upload still open for it); on a store error the cleanup job tries
 * again.
 */
export async function removeAssetBytes(h: Herald, asset: AssetRow): Promise<void> {
  if (!asset.blobKey) return;
  try {
    const upload = await findLatestUploadForAsset(h.db, asset.id);
    if (
      upload &&
      (upload.status === "pending" || upload.status === "completing") &&
      upload.storage === h.blobs.kind
    ) {
      await h.blobs.abortMultipart(upload.blobKey, upload.storeUploadId);
      await inTransaction(h.db, (tx) =>
        updateUploadInState(tx, upload.id, ["pending"], { status: "expired" }),
      );
    }
    await h.blobs.delete(asset.blobKey);
    await inTransaction(h.db, (tx) => updateAsset(tx, asset.id, { blobKey: null }));
  } catch (error) {
    h.logger.warn("could not remove a deleted asset's bytes yet; the cleanup job retries", {
      asset_id: asset.id,
      error: (error as Error).message,
    });
  }
}

/** Serves the bytes of a ready asset at Herald's signed download URL. */
export async function downloadAsset(
  h: Herald,
  assetId: string,
  query: { expires?: string; signature?: string },
): Promise<Response> {
  const check = checkDownloadUrl(h, assetId, query);
  if (check !== "ok") throw refusedUrl(check, "download");
  const asset = await findAssetById(h.db, assetId);
  if (!asset || asset.deletedAt !== null || asset.status !== "ready" || !asset.blobKey)
    throw notFound("asset");
  const body = await h.blobs.read(asset.blobKey).catch((error) => {
    if (error instanceof BlobError && error.code === "not_found") throw notFound("asset");
    throw error;
  });
  const safeName = asset.label.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return new Response(body, {
    headers: {
      "content-type": asset.contentType,
      "content-length": String(asset.byteSize),
      "content-disposition": `attachment; filename="${safeName}"; filename*=UTF-8''${encodeURIComponent(asset.label)}`,
      "cache-control": "private, no-store",
      // The declared type is the uploader's: a browser must not guess another (HTML, script) from the bytes.
      "x-content-type-options": "nosniff",
      etag: `"${asset.checksum ?? asset.id}"`,
    },
  });
}
