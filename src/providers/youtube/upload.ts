// YouTube's resumable upload (providers.md §9.2): a session is created with the video's metadata,
// the bytes go in chunks (multiples of 256 KiB, `Content-Range`), YouTube answers 308 with the
// range it holds until the last byte, then the video resource. An interrupted chunk (connection cut,
// timeout, 5xx) is followed by a status probe (`Content-Range: bytes */<total>`) and the upload
// resumes from the offset YouTube reports (each chunk goes on a connection of its own, so the
// runtime never re-sends one behind this code's back); a session that completed answers the probe
// with its video, so repeating any step never makes a second video. Then the video's processing
// status is read.
import { readJson } from "../http.ts";
import { YOUTUBE_OPERATIONS, bearer, youtubeBase, youtubeCall, youtubeJson } from "./api.ts";
import { ProviderError, type DestinationRef, type ProviderDeps } from "../types.ts";

/** Google's chunk unit: every chunk but the last is a multiple of it. */
export const YOUTUBE_CHUNK_UNIT = 256 * 1024;
/** Bytes per PUT unless the deps say otherwise: 8 MiB, each PUT well within a provider timeout. */
export const YOUTUBE_DEFAULT_CHUNK_BYTES = 32 * YOUTUBE_CHUNK_UNIT;
/** Interrupted or refused chunks in a row without YouTube holding more bytes before giving up. */
const MAX_STALLED_CHUNKS = 3;
/** YouTube's answer to a chunk (or probe) while the session still lacks bytes: Resume Incomplete. */
const RESUME_INCOMPLETE = 308;

/** What the YouTube adapter is built with beyond the shared deps: the chunk size (tests use 256 KiB). */
export interface YouTubeUploadDeps extends ProviderDeps {
  /** Bytes per upload PUT, a multiple of 256 KiB; default 8 MiB. */
  youtubeChunkBytes?: number;
}

/** Where a session stands: bytes held so far, the finished video, or expired (404/410). */
export type SessionPosition =
  | { kind: "offset"; offset: number }
  | { kind: "complete"; video: Record<string, any>; statusCode: number }
  | { kind: "expired"; statusCode: number };

/** What YouTube says of an uploaded video: processed, still processing, failed (with why), or not listed. */
export type VideoState =
  | { state: "processed"; video: Record<string, any> }
  | { state: "processing" }
  | { state: "failed"; reason: string }
  | { state: "missing" };

/** The video's metadata as the session is created with it. */
export interface VideoMetadata {
  snippet: Record<string, unknown>;
  status: Record<string, unknown>;
  notifySubscribers: boolean | null;
}

/** What the upload steps work over: the adapter's deps and the checked chunk size. */
interface UploadSession {
  deps: YouTubeUploadDeps;
  chunkBytes: number;
}

/** The resumable-upload half of the YouTube adapter. */
export function createYouTubeUploads(deps: YouTubeUploadDeps) {
  const chunkBytes = deps.youtubeChunkBytes ?? YOUTUBE_DEFAULT_CHUNK_BYTES;
  if (chunkBytes <= 0 || chunkBytes % YOUTUBE_CHUNK_UNIT !== 0)
    throw new Error(`youtubeChunkBytes must be a positive multiple of ${YOUTUBE_CHUNK_UNIT}`);

  const up: UploadSession = { deps, chunkBytes };
  return {
    startSession: (input: Parameters<typeof startSession>[1]) => startSession(up, input),
    upload: (input: Parameters<typeof upload>[1]) => upload(up, input),
    videoState: (input: Parameters<typeof videoState>[1]) => videoState(up, input),
  };
}

/**
 * Creates the upload session (quota is charged here) and answers its URI. Idempotent: a session
 * holds no video until its last byte arrives, so one whose answer was lost is simply never used.
 */
async function startSession(
  up: UploadSession,
  input: {
    destination: DestinationRef;
    metadata: VideoMetadata;
    total: number;
    contentType: string;
  },
): Promise<string> {
  const { destination, metadata } = input;
  const query = new URLSearchParams({ uploadType: "resumable", part: "snippet,status" });
  if (metadata.notifySubscribers !== null) query.set("notifySubscribers", String(metadata.notifySubscribers));
  const operation = YOUTUBE_OPERATIONS.session;
  const response = await youtubeCall({
    deps: up.deps,
    operation,
    url: `${youtubeBase(destination.origin)}/upload/youtube/v3/videos?${query}`,
    init: {
      method: "POST",
      headers: {
        ...bearer(destination.credentials.accessToken),
        "content-type": "application/json; charset=UTF-8",
        "x-upload-content-type": input.contentType,
        "x-upload-content-length": String(input.total),
      },
      body: JSON.stringify({ snippet: metadata.snippet, status: metadata.status }),
    },
    idempotent: true,
  });
  const location = response.headers.get("location") ?? "";
  if (!sessionUriIsSafe({ destination, sessionUri: location }))
    throw new ProviderError(
      "transient",
      `${operation}: YouTube's session URI is not on the API origin ${destination.origin} ` +
        `(${location || "no Location header"}); Herald does not send the token elsewhere`,
      { operation, statusCode: response.status },
    );
  return location;
}

/** One PUT to the session: a chunk of bytes, or (no range) the status probe. */
async function sessionPut(
  up: UploadSession,
  input: {
    destination: DestinationRef;
    sessionUri: string;
    total: number;
    chunk: { start: number; bytes: Uint8Array; contentType: string } | null;
  },
): Promise<SessionPosition> {
  const { destination, sessionUri, total, chunk } = input;
  const operation = chunk ? YOUTUBE_OPERATIONS.chunk : YOUTUBE_OPERATIONS.probe;
  const headers: Record<string, string> = {
    ...bearer(destination.credentials.accessToken),
    "content-range": chunk
      ? `bytes ${chunk.start}-${chunk.start + chunk.bytes.length - 1}/${total}`
      : `bytes */${total}`,
  };
  if (chunk) headers["content-type"] = chunk.contentType;
  const response = await youtubeCall({
    deps: up.deps,
    operation,
    url: sessionUri,
    init: { method: "PUT", headers, body: chunk ? chunk.bytes : new Uint8Array(0) },
    idempotent: true, // one session makes at most one video; a lost answer is settled by a probe
    allow: [RESUME_INCOMPLETE, 404, 410],
    // Google's resumable upload guide: after an interruption, ask with `bytes */TOTAL` and resume
    // after the `Range` answer, so a cut chunk must reach this code, never be re-sent whole by fetch.
    freshConnection: chunk !== null,
  });
  if (response.status === 404 || response.status === 410)
    return { kind: "expired", statusCode: response.status };
  if (response.status === RESUME_INCOMPLETE)
    return { kind: "offset", offset: heldBytes(response.headers.get("range")) };
  const video = await youtubeJsonOf(response, operation);
  return { kind: "complete", video, statusCode: response.status };
}

/**
 * Sends what the session does not hold yet, from the offset its probe reports, until YouTube
 * answers with the video (or says the session expired). An interrupted chunk is probed and
 * resumed; a probe that fails, or chunks that stop making progress, throw (`transient`).
 */
async function upload(
  up: UploadSession,
  input: {
    destination: DestinationRef;
    sessionUri: string;
    bytes: Uint8Array;
    contentType: string;
  },
): Promise<Exclude<SessionPosition, { kind: "offset" }>> {
  const { destination, sessionUri, bytes, contentType } = input;
  const total = bytes.length;
  const probe = () => sessionPut(up, { destination, sessionUri, total, chunk: null });
  let position = await probe();
  let stalled = 0;
  while (position.kind === "offset") {
    const start = position.offset;
    if (start >= total)
      throw new ProviderError(
        "transient",
        `${YOUTUBE_OPERATIONS.probe}: YouTube holds ${start} of ${total} bytes but has not finished the video`,
        { operation: YOUTUBE_OPERATIONS.probe },
      );
    const chunk = {
      start,
      bytes: bytes.subarray(start, Math.min(start + up.chunkBytes, total)),
      contentType,
    };
    let failure: ProviderError | null = null;
    try {
      position = await sessionPut(up, { destination, sessionUri, total, chunk });
    } catch (error) {
      // Cut off, timed out or 5xx: what YouTube kept is what its probe says, not what was sent.
      if (!(error instanceof ProviderError) || error.kind !== "transient") throw error;
      failure = error;
      position = await probe();
    }
    const progressed = position.kind !== "offset" || position.offset > start;
    stalled = progressed ? 0 : stalled + 1;
    if (stalled >= MAX_STALLED_CHUNKS)
      throw (
        failure ??
        new ProviderError(
          "transient",
          `${YOUTUBE_OPERATIONS.chunk}: YouTube's session stopped taking bytes`,
          {
            operation: YOUTUBE_OPERATIONS.chunk,
          },
        )
      );
  }
  return position;
}

/** Reads an uploaded video's status and processing details (one quota unit). */
async function videoState(
  up: UploadSession,
  input: { destination: DestinationRef; videoId: string },
): Promise<VideoState> {
  const { destination, videoId } = input;
  const query = new URLSearchParams({ part: "status,processingDetails", id: videoId });
  const body = await youtubeJson({
    deps: up.deps,
    operation: YOUTUBE_OPERATIONS.videos,
    url: `${youtubeBase(destination.origin)}/youtube/v3/videos?${query}`,
    init: { headers: bearer(destination.credentials.accessToken) },
    idempotent: true,
  });
  const video = Array.isArray(body.items) ? body.items.find((v: any) => v?.id === videoId) : undefined;
  return video ? stateOf(video) : { state: "missing" };
}

/**
 * Where a video stands from its `status` and `processingDetails`: `uploadStatus` processed (or
 * processing succeeded) is done; failed, rejected or deleted, or processing failed or terminated,
 * is a failure with YouTube's reason; anything else (uploaded, processing) is still processing.
 */
export function stateOf(video: Record<string, any>): VideoState {
  const status = video.status ?? {};
  const processing = video.processingDetails ?? {};
  const upload = status.uploadStatus;
  if (upload === "failed")
    return { state: "failed", reason: `upload failed (${status.failureReason ?? "unknown"})` };
  if (upload === "rejected")
    return { state: "failed", reason: `YouTube rejected the video (${status.rejectionReason ?? "unknown"})` };
  if (upload === "deleted") return { state: "failed", reason: "the video was deleted on YouTube" };
  if (processing.processingStatus === "failed" || processing.processingStatus === "terminated")
    return {
      state: "failed",
      reason: `processing ${processing.processingStatus} (${processing.processingFailureReason ?? "unknown"})`,
    };
  if (upload === "processed" || processing.processingStatus === "succeeded")
    return { state: "processed", video };
  return { state: "processing" };
}

/**
 * Whether a session URI may receive the destination's token: on the destination's API origin (YouTube
 * hands out `https://www.googleapis.com/upload/youtube/v3/videos?…&upload_id=…`).
 */
export function sessionUriIsSafe(input: { destination: DestinationRef; sessionUri: unknown }): boolean {
  if (typeof input.sessionUri !== "string" || input.sessionUri === "") return false;
  try {
    return new URL(input.sessionUri).origin === new URL(input.destination.origin).origin;
  } catch {
    return false;
  }
}

/** Bytes a session holds from a 308's `Range: bytes=0-N` (none: 0). */
function heldBytes(range: string | null): number {
  const last = range ? /^bytes=0-(\d+)$/.exec(range.trim())?.[1] : undefined;
  return last === undefined ? 0 : Number(last) + 1;
}

async function youtubeJsonOf(response: Response, operation: string): Promise<Record<string, any>> {
  const video = await readJson(response);
  if (!video || typeof video.id !== "string" || video.id === "")
    throw new ProviderError(
      "transient",
      `${operation}: YouTube finished the upload (${response.status}) but its answer has no video id`,
      { operation, statusCode: response.status },
    );
  return video;
}
