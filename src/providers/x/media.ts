// X media: images through the simple v2 upload, GIFs and videos through the chunked v2 flow
// (initialize, append, finalize, STATUS polls), alt text through media metadata. Uploads of media
// no post uses yet are idempotent: a repeated upload leaves an unused media id that X expires.
import { isCutUpload } from "../http.ts";
import { X_OPERATIONS, xBase, xBearer, xCall, xJson } from "./http.ts";
import { xAltText, xMediaKind } from "./rules.ts";
import { ProviderError, type AdapterDeps, type DestinationRef, type MediaItem } from "../types.ts";

/**
 * What the X media half is built with; `xChunkBytes` sizes append segments (default 4 MiB; tests smaller).
 */
export interface XMediaDeps extends AdapterDeps {
  xChunkBytes?: number;
}

/**
 * The media of one body item after upload: ids in order, the ones X is still processing, when they expire.
 */
export interface XUploads {
  mediaIds: string[];
  processing: string[];
  /** Epoch ms after which X forgets the media ids (the earliest `expires_after_secs`). */
  expiresAt: number;
  /** When X suggests checking again (`check_after_secs`), ms from now. */
  checkAfterMs: number;
}

/** Where one media id stands: ready, still processing (check again after `checkAfterMs`). */
type Processing = { done: true } | { done: false; checkAfterMs: number };

const DEFAULT_CHUNK_BYTES = 4 * 1024 * 1024;
/** X keeps uploaded media a day unless it says otherwise. */
const DEFAULT_EXPIRY_SECS = 86_400;
const CATEGORY = { image: "tweet_image", gif: "tweet_gif", video: "tweet_video" } as const;

/** The media half of the X adapter. */
export interface XMedia {
  /** Uploads every media item of a post (and its alt text); X may still be processing some. */
  uploadAll(input: {
    destination: DestinationRef;
    media: MediaItem[];
    options: Record<string, unknown>;
  }): Promise<XUploads>;
  /** Polls X briefly (`pollIntervalMs` × `maxPolls`) for media still processing; answers what is left. */
  waitBriefly(input: {
    destination: DestinationRef;
    processing: string[];
  }): Promise<{ processing: string[]; checkAfterMs: number }>;
  /** One STATUS round over media ids: the ones still processing. Throws `rejected` when processing failed. */
  checkOnce(input: {
    destination: DestinationRef;
    processing: string[];
  }): Promise<{ processing: string[]; checkAfterMs: number }>;
}

/** Builds the media half over `deps`. */
export function createXMedia(deps: XMediaDeps): XMedia {
  const pollIntervalMs = deps.pollIntervalMs ?? 1000;
  const maxPolls = Math.max(1, deps.maxPolls ?? 5);

  return {
    async uploadAll({ destination, media, options }) {
      const uploads: XUploads = {
        mediaIds: [],
        processing: [],
        expiresAt: Number.POSITIVE_INFINITY,
        checkAfterMs: 0,
      };
      for (const item of media) {
        const type = item.contentType.split(";")[0]!.trim().toLowerCase();
        const kind = xMediaKind(type);
        if (kind === null)
          throw new ProviderError("rejected", `X does not take ${item.contentType} media`, {
            operation: X_OPERATIONS.upload,
          });
        const started = deps.clock.now();
        const { data, processing } =
          kind === "image"
            ? await uploadImage(deps, destination, item, type)
            : await uploadChunked(deps, destination, item, type, kind);
        const id = String(data.id);
        const expiresSecs =
          Number(data.expires_after_secs) > 0 ? Number(data.expires_after_secs) : DEFAULT_EXPIRY_SECS;
        uploads.expiresAt = Math.min(uploads.expiresAt, started + expiresSecs * 1000);
        uploads.mediaIds.push(id);
        if (processing && !processing.done) {
          uploads.processing.push(id);
          uploads.checkAfterMs = Math.max(uploads.checkAfterMs, processing.checkAfterMs);
        }
        // X's media metadata takes alt text for images and GIFs (not videos).
        const alt = kind === "video" ? null : xAltText(item, options);
        if (alt !== null) await setAltText(deps, destination, id, alt);
      }
      return uploads;
    },

    async waitBriefly({ destination, processing }) {
      let left = { processing, checkAfterMs: 0 };
      for (let poll = 0; poll < maxPolls && left.processing.length > 0; poll++) {
        await Bun.sleep(pollIntervalMs);
        left = await checkOnce(deps, { destination, processing: left.processing });
      }
      return left;
    },

    checkOnce: (input) => checkOnce(deps, input),
  };
}

/** The simple upload (multipart `media` + `media_category`): still images. */
async function uploadImage(deps: XMediaDeps, destination: DestinationRef, media: MediaItem, type: string) {
  const form = new FormData();
  form.append("media", new Blob([await media.read()], { type }), fileName(media, type));
  form.append("media_category", CATEGORY.image);
  form.append("media_type", type);
  const body = await xJson({
    deps,
    operation: X_OPERATIONS.upload,
    url: mediaUrl(destination),
    init: { method: "POST", headers: xBearer(destination), body: form },
    idempotent: true,
  });
  return { data: dataOf(body, X_OPERATIONS.upload), processing: null };
}

/** The chunked upload: initialize, one append per segment, finalize (which may start processing). */
async function uploadChunked(
  deps: XMediaDeps,
  destination: DestinationRef,
  media: MediaItem,
  type: string,
  kind: "gif" | "video",
) {
  const bytes = await media.read();
  const init = dataOf(
    await xJson({
      deps,
      operation: X_OPERATIONS.initialize,
      url: mediaUrl(destination, "/initialize"),
      init: {
        method: "POST",
        headers: { ...xBearer(destination), "content-type": "application/json" },
        body: JSON.stringify({
          media_type: type,
          total_bytes: bytes.length,
          media_category: CATEGORY[kind],
        }),
      },
      idempotent: true,
    }),
    X_OPERATIONS.initialize,
  );
  const id = encodeURIComponent(init.id);
  const chunkBytes = Math.max(1, deps.xChunkBytes ?? DEFAULT_CHUNK_BYTES);
  for (let segment = 0; segment * chunkBytes < bytes.length; segment++) {
    const chunk = bytes.subarray(segment * chunkBytes, (segment + 1) * chunkBytes);
    await appendSegment({ deps, destination, id, segment, chunk });
  }
  const finalized = dataOf(
    await xJson({
      deps,
      operation: X_OPERATIONS.finalize,
      url: mediaUrl(destination, `/${id}/finalize`),
      init: { method: "POST", headers: xBearer(destination) },
      idempotent: true,
    }),
    X_OPERATIONS.finalize,
  );
  return { data: { ...init, ...finalized }, processing: processingOf(finalized, init.id) };
}

/**
 * Sends one segment on a connection of its own. X's chunked upload guide: chunks "can be retried
 * individually" (the same segment_index again replaces that segment), so a segment cut on the way
 * (reset, timeout, 5xx) is sent again once, by Herald, never behind its back by the runtime; a
 * second failure is thrown and FINALIZE never runs on a file with a hole.
 */
async function appendSegment(input: {
  deps: XMediaDeps;
  destination: DestinationRef;
  id: string;
  segment: number;
  chunk: Uint8Array;
}): Promise<void> {
  const { deps, destination, id, segment, chunk } = input;
  const send = () => {
    const form = new FormData();
    form.append("segment_index", String(segment));
    form.append("media", new Blob([chunk], { type: "application/octet-stream" }), "chunk");
    return xCall({
      deps,
      operation: X_OPERATIONS.append,
      url: mediaUrl(destination, `/${id}/append`),
      init: { method: "POST", headers: xBearer(destination), body: form },
      idempotent: true, // the same segment index again replaces the segment
      freshConnection: true,
    });
  };
  try {
    await send();
  } catch (error) {
    if (!isCutUpload(error)) throw error;
    await send();
  }
}

async function setAltText(
  deps: XMediaDeps,
  destination: DestinationRef,
  id: string,
  text: string,
): Promise<void> {
  await xCall({
    deps,
    operation: X_OPERATIONS.metadata,
    url: `${xBase(destination.origin)}/2/media/metadata`,
    init: {
      method: "POST",
      headers: { ...xBearer(destination), "content-type": "application/json" },
      body: JSON.stringify({ id, metadata: { alt_text: { text } } }),
    },
    idempotent: true, // setting the same alt text twice is harmless
  });
}

async function status(deps: XMediaDeps, destination: DestinationRef, id: string): Promise<Processing> {
  const query = new URLSearchParams({ command: "STATUS", media_id: id });
  const body = await xJson({
    deps,
    operation: X_OPERATIONS.status,
    url: `${mediaUrl(destination)}?${query}`,
    init: { headers: xBearer(destination) },
    idempotent: true,
  });
  return processingOf(dataOf(body, X_OPERATIONS.status), id) ?? { done: true };
}

async function checkOnce(deps: XMediaDeps, input: { destination: DestinationRef; processing: string[] }) {
  const left: string[] = [];
  let checkAfterMs = 0;
  for (const id of input.processing) {
    const state = await status(deps, input.destination, id);
    if (state.done) continue;
    left.push(id);
    checkAfterMs = Math.max(checkAfterMs, state.checkAfterMs);
  }
  return { processing: left, checkAfterMs };
}

/** `data` of an X media answer, which must name the media id. */
function dataOf(body: Record<string, any>, operation: string): Record<string, any> {
  const data = body.data;
  if (!data || typeof data !== "object" || (typeof data.id !== "string" && typeof data.id !== "number"))
    throw new ProviderError("transient", `${operation}: X's answer has no media id`, { operation });
  return data;
}

/**
 * The processing state in an answer: none or `succeeded` is ready, `pending`/`in_progress` is still
 * processing, `failed` is X refusing the file (`rejected`, with X's reason).
 */
function processingOf(data: Record<string, any>, id: string): Processing | null {
  const info = data.processing_info;
  if (!info || typeof info !== "object") return null;
  if (info.state === "succeeded") return { done: true };
  if (info.state === "failed") {
    const reason = typeof info.error?.message === "string" ? `: ${info.error.message}` : "";
    throw new ProviderError("rejected", `X could not process media ${id}${reason}`, {
      operation: X_OPERATIONS.status,
      errorCode: typeof info.error?.name === "string" ? info.error.name : "processing-failed",
    });
  }
  const after = Number(info.check_after_secs);
  return { done: false, checkAfterMs: Number.isFinite(after) && after > 0 ? after * 1000 : 5000 };
}

function fileName(media: MediaItem, type: string): string {
  return `${media.assetId}.${type.split("/")[1] ?? "bin"}`;
}

/** The media upload endpoint (X API v2), with an optional sub-path. */
function mediaUrl(destination: DestinationRef, path = ""): string {
  return `${xBase(destination.origin)}/2/media/upload${path}`;
}
