// Publishing one Facebook Page item (providers.md §6.2) with the Page token: text and links to
// /{page}/feed; one photo straight to /{page}/photos; several photos uploaded unpublished, then one feed
// post with `attached_media`; a video as a reel (/{page}/video_reels start → bytes to the upload URL →
// finish with video_state PUBLISHED), whose status is read until Meta has published it. Only the
// create calls (feed, a published photo, the reel's finish) are not idempotent; nothing after one throws.
import { graphCall, idOf, sleep } from "./graph.ts";
import { FACEBOOK_IMAGE_TYPES, isFacebookVideo } from "./rules.ts";
import { isCutUpload, providerFetch, readJson } from "../http.ts";
import { metaGraphError, metaProvider, metaRetryAt, type MetaAnswer } from "../meta/graph.ts";
import {
  ProviderError,
  type AdapterDeps,
  type DestinationRef,
  type MediaItem,
  type PendingStatus,
  type PublishedItem,
  type PublishItemInput,
  type PublishOutcome,
  type PendingPublisher,
} from "../types.ts";

/** When to read a processing reel's status again. */
export const FACEBOOK_REEL_CHECK_MS = 30_000;

/**
 * A reel Meta is still processing this long after it was sent is reported `outcome_unknown`: it was
 * asked to publish and may still appear, so it is neither failed nor sent again.
 */
export const FACEBOOK_REEL_MAX_WAIT_MS = 24 * 60 * 60_000;

/** What a pending reel stores (no secrets): the video id Meta publishes under. */
export interface FacebookPendingData {
  videoId: string;
  [key: string]: unknown;
}

/** The publishing half of the Facebook adapter. */
export type FacebookPublisher = PendingPublisher;

/** What one status read of a reel says. */
type ReelState =
  | { kind: "published" }
  | { kind: "processing" }
  | { kind: "error"; reason: string }
  | { kind: "expired" };

/** Builds the Page publishing flows over `deps` (fetch, clock, poll pace). */
export function createFacebookPublisher(deps: AdapterDeps): FacebookPublisher {
  return {
    async publishItem(input) {
      const video = input.media.find((m) => isFacebookVideo(m.contentType));
      if (video) return reel(deps, input, video);
      const photos = input.media.filter((m) => FACEBOOK_IMAGE_TYPES.includes(m.contentType));
      if (photos.length !== input.media.length)
        throw new ProviderError("rejected", "Facebook takes JPEG or PNG photos or one video", {
          operation: "publishItem",
        });
      if (photos.length === 0) return feedPost(deps, input, []);
      if (photos.length === 1) return singlePhoto(deps, input, photos[0]!);
      return severalPhotos(deps, input);
    },

    async checkPending({ destination, data, since }) {
      const videoId = typeof data.videoId === "string" ? data.videoId : "";
      if (videoId === "")
        throw new ProviderError("outcome_unknown", "the pending Facebook reel has no video id", {
          operation: "checkPending",
        });
      return drive(deps, destination, videoId, since);
    },
  };
}

function call(
  deps: AdapterDeps,
  destination: DestinationRef,
  request: Omit<Parameters<typeof graphCall>[0], "deps" | "origin" | "token">,
): Promise<MetaAnswer> {
  return graphCall({
    deps,
    origin: destination.origin,
    token: String(destination.credentials.accessToken ?? ""),
    ...request,
  });
}

const page = (destination: DestinationRef) => encodeURIComponent(destination.externalId);

/** A text or link post, or a post of photos uploaded before (`attached_media`). */
async function feedPost(
  deps: AdapterDeps,
  input: PublishItemInput,
  photoIds: string[],
): Promise<PublishedItem> {
  const operation = "POST /{page-id}/feed";
  const link = input.options.link;
  const params: Record<string, string> = {
    ...(input.text !== "" ? { message: input.text } : {}),
    ...(typeof link === "string" ? { link } : {}),
  };
  photoIds.forEach((id, i) => (params[`attached_media[${i}]`] = JSON.stringify({ media_fbid: id })));
  const answer = await call(deps, input.destination, {
    method: "POST",
    path: `${page(input.destination)}/feed`,
    params,
    operation,
    idempotent: false,
  });
  const postId = idOf(answer.body, "id", operation, false);
  return {
    providerObjectId: postId,
    url: await permalinkOf(deps, input.destination, postId),
    extra: { postId, ...(photoIds.length > 0 ? { photoIds } : {}) },
    provider: metaProvider(operation, answer),
  };
}

/** Uploads one photo's bytes; unpublished (an id to attach, idempotent) or as the post itself. */
async function photo(
  deps: AdapterDeps,
  input: PublishItemInput,
  media: MediaItem,
  bytes: Uint8Array,
  published: boolean,
): Promise<MetaAnswer> {
  const form = new FormData();
  form.set("source", new Blob([bytes], { type: media.contentType }), fileName(media));
  form.set("published", String(published));
  if (published && input.text !== "") form.set("caption", input.text);
  return call(deps, input.destination, {
    method: "POST",
    path: `${page(input.destination)}/photos`,
    form,
    operation: published ? "POST /{page-id}/photos" : "POST /{page-id}/photos?published=false",
    idempotent: !published,
  });
}

/** One photo goes straight to /photos as the post; its receipt is the post (`post_id`), not the photo. */
async function singlePhoto(
  deps: AdapterDeps,
  input: PublishItemInput,
  media: MediaItem,
): Promise<PublishedItem> {
  const bytes = await media.read();
  const operation = "POST /{page-id}/photos";
  const answer = await photo(deps, input, media, bytes, true);
  const photoId = idOf(answer.body, "id", operation, false);
  const postId = typeof answer.body.post_id === "string" ? answer.body.post_id : photoId;
  return {
    providerObjectId: postId,
    url: await permalinkOf(deps, input.destination, postId),
    extra: { postId, photoIds: [photoId] },
    provider: metaProvider(operation, answer),
  };
}

async function severalPhotos(deps: AdapterDeps, input: PublishItemInput): Promise<PublishedItem> {
  const ids: string[] = [];
  for (const media of input.media) {
    const answer = await photo(deps, input, media, await media.read(), false);
    ids.push(idOf(answer.body, "id", "POST /{page-id}/photos?published=false", true));
  }
  return feedPost(deps, input, ids);
}

/** Reel: start, upload the bytes, finish with PUBLISHED; then its status until published. */
async function reel(deps: AdapterDeps, input: PublishItemInput, media: MediaItem): Promise<PublishOutcome> {
  const bytes = await media.read();
  const since = deps.clock.now();
  const start = await call(deps, input.destination, {
    method: "POST",
    path: `${page(input.destination)}/video_reels`,
    params: { upload_phase: "start" },
    operation: "POST /{page-id}/video_reels?upload_phase=start",
    idempotent: true, // an upload session publishes nothing
  });
  const videoId = idOf(start.body, "video_id", "POST /{page-id}/video_reels?upload_phase=start", true);
  await upload(deps, input.destination, { videoId, uploadUrl: String(start.body.upload_url ?? ""), bytes });
  const finishOperation = "POST /{page-id}/video_reels?upload_phase=finish";
  const finish = await call(deps, input.destination, {
    method: "POST",
    path: `${page(input.destination)}/video_reels`,
    params: {
      upload_phase: "finish",
      video_id: videoId,
      video_state: "PUBLISHED",
      ...(input.text !== "" ? { description: input.text } : {}),
    },
    operation: finishOperation,
    idempotent: false,
  });
  if (finish.body.success !== true)
    throw new ProviderError(
      "outcome_unknown",
      `${finishOperation}: Meta did not confirm the reel ${videoId}; it may still be published`,
      { operation: finishOperation, statusCode: finish.response.status },
    );
  const status = await drive(deps, input.destination, videoId, since);
  if (status.state === "pending")
    return {
      pending: true,
      data: { videoId },
      checkAgainAt: status.checkAgainAt,
      provider: metaProvider(finishOperation, finish),
    };
  if (status.state === "published") return status.item;
  // An expired reel found right after finishing: nothing was published; the engine retries it.
  throw new ProviderError("transient", `Facebook: ${status.reason}`, { operation: "GET /{video-id}" });
}

/** Interrupted uploads of one reel resumed (each from the bytes Meta reports) before giving up. */
const REEL_UPLOAD_RESUMES = 3;

/**
 * Sends the bytes to the upload URL Meta gave (rupload.facebook.com); the Page token goes only to an
 * https URL or to the API origin itself. Meta's Reels Publishing API: an interrupted upload is
 * resumed by reading the reel's status (`uploading_phase.bytes_transferred`) and posting the rest
 * with `offset` set to it. So each POST goes on a connection of its own (the runtime never re-sends
 * the file behind this code's back), and a cut one (reset, timeout, 5xx) is followed by that read
 * and a POST of what Meta does not hold yet, up to three times.
 */
async function upload(
  deps: AdapterDeps,
  destination: DestinationRef,
  input: { videoId: string; uploadUrl: string; bytes: Uint8Array },
): Promise<void> {
  const operation = "POST {upload_url}";
  let target: URL;
  try {
    target = new URL(input.uploadUrl);
  } catch {
    throw new ProviderError("transient", `${operation}: Meta gave no usable upload URL`, { operation });
  }
  if (target.protocol !== "https:" && target.origin !== new URL(destination.origin).origin)
    throw new ProviderError("rejected", `${operation}: Herald sends the Page token only over https`, {
      operation,
    });
  const { bytes } = input;
  let offset = 0;
  for (let resumes = 0; ; resumes++) {
    try {
      await uploadFrom(deps, destination, { target, bytes, offset });
      return;
    } catch (error) {
      if (!isCutUpload(error) || resumes >= REEL_UPLOAD_RESUMES) throw error;
      offset = await bytesTransferred(deps, destination, input.videoId, bytes.length);
      if (offset >= bytes.length) return;
    }
  }
}

/** One POST of the bytes from `offset` on, on a fresh connection. */
async function uploadFrom(
  deps: AdapterDeps,
  destination: DestinationRef,
  input: { target: URL; bytes: Uint8Array; offset: number },
): Promise<void> {
  const operation = "POST {upload_url}";
  const response = await providerFetch({
    deps,
    operation,
    url: String(input.target),
    init: {
      method: "POST",
      headers: {
        authorization: `OAuth ${String(destination.credentials.accessToken ?? "")}`,
        offset: String(input.offset),
        file_size: String(input.bytes.length),
        "content-type": "application/octet-stream",
      },
      body: input.bytes.subarray(input.offset),
    },
    idempotent: true,
    retryAt: metaRetryAt(deps.clock),
    freshConnection: true,
  });
  if (!response.ok) throw await metaGraphError({ operation, response, clock: deps.clock, idempotent: true });
  const body = await readJson(response);
  if (body?.success !== true)
    throw new ProviderError("transient", `${operation}: Meta did not confirm the upload`, {
      operation,
      statusCode: response.status,
    });
}

/** The bytes of the file Meta holds, from the reel's status (`uploading_phase.bytes_transferred`; none: 0). */
async function bytesTransferred(
  deps: AdapterDeps,
  destination: DestinationRef,
  videoId: string,
  total: number,
): Promise<number> {
  const status = await reelStatus(deps, destination, videoId);
  const held = Number(status.uploading_phase?.bytes_transferred);
  return Number.isInteger(held) && held > 0 ? Math.min(held, total) : 0;
}

/** A reel's `status` object as Meta reports it (its upload, processing and publishing phases). */
async function reelStatus(
  deps: AdapterDeps,
  destination: DestinationRef,
  videoId: string,
): Promise<Record<string, any>> {
  const { body } = await call(deps, destination, {
    method: "GET",
    path: encodeURIComponent(videoId),
    params: { fields: "status" },
    operation: "GET /{video-id}?fields=status",
    idempotent: true,
  });
  return (body.status ?? {}) as Record<string, any>;
}

async function reelState(
  deps: AdapterDeps,
  destination: DestinationRef,
  videoId: string,
): Promise<ReelState> {
  const status = await reelStatus(deps, destination, videoId);
  const phases = ["uploading_phase", "processing_phase", "publishing_phase"].map((key) => status[key] ?? {});
  const failed = phases.find((phase) => phase.status === "error");
  if (failed || status.video_status === "error") {
    const reason = failed?.errors?.[0]?.message ?? status.video_status;
    return { kind: "error", reason: typeof reason === "string" ? reason : "error" };
  }
  if (status.video_status === "expired") return { kind: "expired" };
  const publishing = phases[2]!;
  if (publishing.status === "complete" || publishing.publish_status === "published")
    return { kind: "published" };
  return { kind: "processing" };
}

/** Reads the reel's status (a few times inline) until Meta published it, refused it or dropped it. */
async function drive(
  deps: AdapterDeps,
  destination: DestinationRef,
  videoId: string,
  since: number,
): Promise<PendingStatus> {
  const pollIntervalMs = deps.pollIntervalMs ?? 1000;
  const maxPolls = Math.max(1, deps.maxPolls ?? 5);
  for (let poll = 1; ; poll++) {
    const state = await reelState(deps, destination, videoId);
    if (state.kind === "published")
      return {
        state: "published",
        item: {
          providerObjectId: videoId,
          url: `https://www.facebook.com/reel/${encodeURIComponent(videoId)}`,
          extra: { videoId, reel: true },
          provider: { operation: "GET /{video-id}?fields=status", requestId: null, statusCode: 200 },
        },
      };
    if (state.kind === "error")
      throw new ProviderError("rejected", `Facebook could not publish the reel: ${state.reason}`, {
        operation: "GET /{video-id}?fields=status",
        errorCode: state.reason,
      });
    if (state.kind === "expired")
      return { state: "gone", reason: "the reel's upload expired before it was published" };
    if (poll >= maxPolls) {
      if (deps.clock.now() - since > FACEBOOK_REEL_MAX_WAIT_MS)
        throw new ProviderError(
          "outcome_unknown",
          `Facebook was still processing reel ${videoId} 24 hours after it was sent; it may still appear on the Page`,
          { operation: "GET /{video-id}?fields=status" },
        );
      return { state: "pending", checkAgainAt: deps.clock.now() + FACEBOOK_REEL_CHECK_MS };
    }
    await sleep(pollIntervalMs);
  }
}

/** The post's permalink_url; never throws (the post exists): falls back to facebook.com/<post id>. */
async function permalinkOf(deps: AdapterDeps, destination: DestinationRef, postId: string): Promise<string> {
  try {
    const { body } = await call(deps, destination, {
      method: "GET",
      path: encodeURIComponent(postId),
      params: { fields: "permalink_url" },
      operation: "GET /{post-id}?fields=permalink_url",
      idempotent: true,
    });
    if (typeof body.permalink_url === "string" && /^https:\/\//.test(body.permalink_url))
      return body.permalink_url;
  } catch {
    // Published already; a missing permalink is no reason to fail the post.
  }
  return `https://www.facebook.com/${encodeURIComponent(postId)}`;
}

function fileName(media: MediaItem): string {
  return `${media.assetId}.${media.contentType === "image/png" ? "png" : "jpg"}`;
}
