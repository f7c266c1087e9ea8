// A TikTok video's FILE_UPLOAD (providers.md §8.2, TikTok's media transfer guide): the chunk plan
// announced at init, and the PUTs of the chunks TikTok does not have yet, in order, with
// `Content-Range`. The upload belongs to a pending post and runs inside its status checks: a chunk
// that fails (cut connection, 5xx, 416) is resumed from TikTok's `uploaded_bytes`, in this check or a
// later one (another process's too), and the post is never initialised a second time.
import { providerFetch, readJson } from "../http.ts";
import { readTikTokStatus, TIKTOK_OPERATIONS, tiktokError, tiktokRetryAt } from "./api.ts";
import type { TikTokPostKind } from "./rules.ts";
import { ProviderError, type DestinationRef, type ProviderDeps, type PublishItemInput } from "../types.ts";

const MiB = 1024 * 1024;
/** Smallest chunk TikTok takes ("5 MB", read as the larger 5 MiB) unless the video goes whole. */
export const TIKTOK_MIN_CHUNK_BYTES = 5 * MiB;
/** Largest chunk but the last ("64 MB", read as the smaller 64,000,000 bytes). */
export const TIKTOK_MAX_CHUNK_BYTES = 64_000_000;
/** The chunk size Herald uses: few requests, and a cut connection costs at most 10 MiB again. */
export const TIKTOK_DEFAULT_CHUNK_BYTES = 10 * MiB;
/** TikTok takes at most this many chunks. */
const MAX_CHUNKS = 1000;
/** Chunk uploads that fail (cut, 5xx) are resumed this many times within one check. */
const UPLOAD_RESUMES = 3;

/**
 * What a pending TikTok post stores (sealed like all pending data). `upload_url` can only add bytes
 * to this one unfinished post and expires an hour after the init: it is kept so any process can
 * finish the upload.
 */
export interface TikTokPendingData {
  media_type: TikTokPostKind;
  publish_id: string;
  /** Where the video's chunks go; null for photos. */
  upload_url: string | null;
  video_size: number;
  chunk_size: number;
  total_chunk_count: number;
  /** Whether TikTok has every byte of the video (always true for photos). */
  uploaded: boolean;
  /** The creator's username at init, for the receipt URL. */
  username: string;
  privacy_level: string;
  /** Status checks made so far (for the backoff). */
  checks: number;
  /** When TikTok first said PUBLISH_COMPLETE without a post id (epoch ms), or null. */
  complete_since: number | null;
  [key: string]: unknown;
}

/** The chunks of a video: `count` chunks of `chunkSize` bytes, the last one taking the trailing bytes. */
export interface ChunkPlan {
  chunkSize: number;
  count: number;
}

/**
 * TikTok's chunk rules for `size` bytes: a video up to `chunkBytes` (always under 5 MB) goes whole;
 * otherwise chunks of `chunkBytes` (held to 5 MiB–64 MB), `count = floor(size / chunkSize)`, so the
 * last one is one to two chunks long (≤ 128 MB), and at most 1,000 chunks.
 */
export function chunkPlan(size: number, chunkBytes = TIKTOK_DEFAULT_CHUNK_BYTES): ChunkPlan {
  let chunkSize = Math.min(Math.max(chunkBytes, TIKTOK_MIN_CHUNK_BYTES), TIKTOK_MAX_CHUNK_BYTES);
  if (size <= chunkSize) return { chunkSize: size, count: 1 };
  if (Math.floor(size / chunkSize) > MAX_CHUNKS) chunkSize = Math.ceil(size / MAX_CHUNKS);
  return { chunkSize, count: Math.floor(size / chunkSize) };
}

/** The first and last byte (inclusive) of chunk `index`. */
export function chunkRange(plan: ChunkPlan, size: number, index: number): [number, number] {
  const first = index * plan.chunkSize;
  const end = index === plan.count - 1 ? size : first + plan.chunkSize;
  return [first, end - 1];
}

/** A FAILED post as a refusal with TikTok's `fail_reason` (nothing was published). */
export function failedPost(data: TikTokPendingData, reason: string | null): ProviderError {
  const hint = /pull|download/i.test(reason ?? "")
    ? "; TikTok pulls photos from Herald's public URL, whose domain must be verified for the app"
    : "";
  return new ProviderError(
    "rejected",
    `TikTok could not publish the ${data.media_type} post: ${reason ?? "UNKNOWN"}${hint}`,
    { operation: TIKTOK_OPERATIONS.status, errorCode: reason },
  );
}

/**
 * Sends the chunks TikTok does not have yet, in order. A failed chunk (cut connection, 5xx, 416) is
 * resumed from TikTok's `uploaded_bytes` up to three times; then the failure is thrown (`transient`:
 * the engine checks again later and resumes the same way). FAILED is `rejected`.
 */
export async function uploadVideo(input: {
  deps: ProviderDeps;
  destination: DestinationRef;
  item: PublishItemInput;
  data: TikTokPendingData;
  /** Pause before asking TikTok where to resume, ms. */
  pauseMs: number;
}): Promise<void> {
  const { deps, destination, data } = input;
  const video = input.item.media[0];
  if (!video)
    throw new ProviderError("rejected", "the video of this TikTok post is no longer available", {
      operation: TIKTOK_OPERATIONS.upload,
    });
  const bytes = await video.read();
  if (bytes.length !== data.video_size)
    throw new ProviderError(
      "rejected",
      `the video is ${bytes.length} bytes, not the ${data.video_size} announced to TikTok`,
      { operation: TIKTOK_OPERATIONS.upload },
    );
  const resumePoint = async (fallback: number) => {
    const status = await readTikTokStatus({ deps, destination, publishId: data.publish_id });
    if (status.status === "FAILED") throw failedPost(data, status.failReason);
    // Past PROCESSING_UPLOAD, TikTok has the whole file.
    if (status.status !== "PROCESSING_UPLOAD" && status.status !== "") return data.total_chunk_count;
    if (status.uploadedBytes === null) return fallback;
    if (status.uploadedBytes >= data.video_size) return data.total_chunk_count;
    return Math.min(Math.floor(status.uploadedBytes / data.chunk_size), data.total_chunk_count - 1);
  };
  let next = await resumePoint(0);
  for (let failures = 0; next < data.total_chunk_count; ) {
    try {
      await putChunk({ deps, data, bytes, contentType: video.contentType, index: next });
      next += 1;
    } catch (error) {
      const resumable =
        error instanceof ProviderError && (error.kind === "transient" || error.kind === "outcome_unknown");
      if (!resumable || ++failures > UPLOAD_RESUMES) throw error;
      await Bun.sleep(input.pauseMs);
      next = await resumePoint(next);
    }
  }
}

/** PUTs one chunk to the upload URL (idempotent: the same range again replaces nothing else). */
async function putChunk(input: {
  deps: ProviderDeps;
  data: TikTokPendingData;
  bytes: Uint8Array;
  contentType: string;
  index: number;
}): Promise<void> {
  const { deps, data, index } = input;
  const plan = { chunkSize: data.chunk_size, count: data.total_chunk_count };
  const [first, last] = chunkRange(plan, data.video_size, index);
  const operation = `${TIKTOK_OPERATIONS.upload} (chunk ${index + 1} of ${data.total_chunk_count})`;
  // No bearer token: the upload URL carries its own authorisation, and it may be another host.
  const response = await providerFetch({
    deps,
    operation,
    url: data.upload_url!,
    init: {
      method: "PUT",
      headers: {
        "content-type": input.contentType,
        "content-range": `bytes ${first}-${last}/${data.video_size}`,
      },
      body: input.bytes.subarray(first, last + 1),
    },
    idempotent: true,
    retryAt: tiktokRetryAt(deps.clock),
    // TikTok's media transfer guide: chunks go sequentially and the status fetch reports the
    // `uploaded_bytes` TikTok holds; a cut chunk is sent again from there by `uploadVideo` (the
    // upload URL lives an hour), never re-sent whole by the runtime on another connection.
    freshConnection: true,
  });
  if (response.ok) return;
  const error = tiktokError({
    operation,
    status: response.status,
    body: await readJson(response),
    logId: response.headers.get("x-tt-logid"),
    clock: deps.clock,
    idempotent: true,
  });
  // 416: TikTok expected another range; where to go on is asked again.
  throw response.status === 416 ? new ProviderError("transient", error.message, error) : error;
}

/** The stored pending data, read defensively (it round-trips through the database as JSON). */
export function pendingDataOf(data: Record<string, unknown>): TikTokPendingData {
  const publishId = data.publish_id;
  const kind = data.media_type;
  if (typeof publishId !== "string" || publishId === "" || (kind !== "video" && kind !== "photo"))
    throw new ProviderError("outcome_unknown", "the pending TikTok post has no publish id", {
      operation: "checkPending",
    });
  const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
  const uploadUrl = typeof data.upload_url === "string" && data.upload_url !== "" ? data.upload_url : null;
  const uploaded = data.uploaded === true || kind === "photo";
  if (!uploaded && (uploadUrl === null || num(data.total_chunk_count) < 1 || num(data.chunk_size) < 1))
    throw new ProviderError("outcome_unknown", `the pending TikTok video ${publishId} has no upload plan`, {
      operation: "checkPending",
    });
  return {
    media_type: kind,
    publish_id: publishId,
    upload_url: uploadUrl,
    video_size: num(data.video_size),
    chunk_size: num(data.chunk_size),
    total_chunk_count: num(data.total_chunk_count),
    uploaded,
    username: typeof data.username === "string" ? data.username : "",
    privacy_level: typeof data.privacy_level === "string" ? data.privacy_level : "",
    checks: num(data.checks),
    complete_since: typeof data.complete_since === "number" ? data.complete_since : null,
  };
}
