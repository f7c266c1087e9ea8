// Publishing one YouTube item (providers.md §9.2): publishItem checks the item, reads the video and
// opens the resumable upload session, then hands back a pending item due at once; checkPending runs
// the upload (upload.ts: probe, chunks, resume from YouTube's offset), polls processing
// briefly, then keeps checking the video's status until YouTube has processed it. Every step can run
// again: the session says what it holds, and the status reads only read.
import { checkYouTubeItem, checkYouTubeOptions, isVideo, titleOf } from "./rules.ts";
import { YOUTUBE_OPERATIONS } from "./api.ts";
import {
  createYouTubeUploads,
  sessionUriIsSafe,
  stateOf,
  type VideoMetadata,
  type VideoState,
  type YouTubeUploadDeps,
} from "./upload.ts";
import {
  ProviderError,
  type AdapterDeps,
  type DestinationRef,
  type PendingItem,
  type PendingStatus,
  type PublishedItem,
  type PublishItemInput,
  type PendingPublisher,
} from "../types.ts";

/** First wait between processing checks; later ones wait a tenth of the time waited so far. */
export const YOUTUBE_RECHECK_MS = 30_000;
/** The longest wait between two processing checks. */
export const YOUTUBE_MAX_RECHECK_MS = 10 * 60_000;
/** A video still processing after this long fails the post (the message names the video). */
export const YOUTUBE_MAX_PROCESSING_MS = 24 * 60 * 60_000;
/** How long after its upload a video YouTube does not list yet still counts as processing. */
const MISSING_GRACE_MS = 10 * 60_000;

/**
 * A pending YouTube item (stored sealed like all pending data): while uploading, the session URI
 * (`…&upload_id=…`; every request to it carries the destination's bearer token) and the byte count;
 * once uploaded, the video id.
 */
type YouTubePendingData =
  | { session_uri: string; total: number; content_type: string }
  | { video_id: string; uploaded_at: number };

/** What the publisher is built with: the registry's deps (and a chunk size for tests). */
export type YouTubePublishDeps = AdapterDeps & YouTubeUploadDeps;

/** The publishing half of the YouTube adapter. */
export type YouTubePublisher = PendingPublisher;

/** What the publishing steps work over: the adapter's deps and the upload calls made from them. */
interface YouTubePublishing {
  deps: YouTubePublishDeps;
  uploads: ReturnType<typeof createYouTubeUploads>;
}

/** Builds the session → upload → processing flow over `deps` (fetch, clock, poll pace, chunk size). */
export function createYouTubePublisher(deps: YouTubePublishDeps): YouTubePublisher {
  const uploads = createYouTubeUploads(deps);
  const yt: YouTubePublishing = { deps, uploads };

  return {
    /**
     * Checks the item, reads the video and creates the upload session; the upload itself runs in
     * `checkPending`, due at once. Nothing is on YouTube until the session has every byte.
     */
    async publishItem(input) {
      const { destination } = input;
      const operation = "publishItem";
      if (input.parent)
        throw new ProviderError("rejected", "YouTube does not publish threads; only one item can be sent", {
          operation,
        });
      const problems = [
        ...checkYouTubeItem({ text: input.text, media: input.media }),
        ...checkYouTubeOptions(input.options).map((p) => ({
          ...p,
          pointer: `/destination_options/youtube${p.pointer}`,
        })),
      ];
      if (problems.length > 0)
        throw new ProviderError(
          "rejected",
          problems.map((p) => `${p.pointer || "text"}: ${p.detail}`).join("; "),
          {
            operation,
          },
        );
      const video = input.media[0]!;
      const bytes = await video.read(); // unreadable media fails before anything is sent
      const sessionUri = await uploads.startSession({
        destination,
        metadata: metadataOf(input),
        total: bytes.length,
        contentType: video.contentType,
      });
      const data = { session_uri: sessionUri, total: bytes.length, content_type: video.contentType };
      return pendingItem(yt, data, deps.clock.now(), 200);
    },

    /**
     * Uploading: probes the session and sends what it lacks (an expired session is `gone`: it can
     * never complete, so a new one is safe), then waits briefly for processing. Uploaded: reads the
     * processing status; processed → published, failed or rejected → `rejected` with YouTube's reason.
     */
    checkPending: (input) => continueYouTubeUpload(yt, input),
  };
}

/** The pending item that continues from `data`, checked again at `at`. */
function pendingItem(
  yt: YouTubePublishing,
  data: YouTubePendingData,
  at: number,
  statusCode: number | null,
): PendingItem {
  return {
    pending: true,
    data: { ...data },
    checkAgainAt: at,
    provider: { operation: YOUTUBE_OPERATIONS.session, requestId: null, statusCode },
  };
}

/**
 * After the upload: the video's state from YouTube's answer, then a few inline polls. Only YouTube's
 * refusal of the video throws (the video exists): a failed read leaves the item pending on its id.
 */
async function afterUpload(
  yt: YouTubePublishing,
  input: {
    destination: DestinationRef;
    video: Record<string, any>;
    statusCode: number;
  },
): Promise<PendingStatus> {
  const { destination, video } = input;
  const videoId = String(video.id);
  const now = yt.deps.clock.now();
  const waiting: PendingStatus = {
    state: "pending",
    checkAgainAt: now + YOUTUBE_RECHECK_MS,
    data: { video_id: videoId, uploaded_at: now },
  };
  let state: VideoState = stateOf(video);
  const polls = Math.max(1, yt.deps.maxPolls ?? 5);
  for (let poll = 0; state.state === "processing" && poll < polls; poll++) {
    await sleep(yt.deps.pollIntervalMs ?? 1000);
    try {
      state = await yt.uploads.videoState({ destination, videoId });
    } catch {
      return waiting;
    }
  }
  if (state.state === "missing") return waiting; // not listed yet: checked again later
  return settled(yt, { destination, videoId, state, statusCode: input.statusCode }) ?? waiting;
}

/** Published or rejected for a settled state; null while processing. */
function settled(
  yt: YouTubePublishing,
  input: {
    destination: DestinationRef;
    videoId: string;
    state: VideoState;
    statusCode: number | null;
  },
): PendingStatus | null {
  const { videoId, state } = input;
  if (state.state === "failed")
    throw new ProviderError("rejected", `${watchUrl(videoId)}: ${state.reason}`, {
      operation: YOUTUBE_OPERATIONS.videos,
      errorCode: state.reason,
    });
  if (state.state !== "processed") return null;
  const item: PublishedItem = {
    providerObjectId: videoId,
    url: watchUrl(videoId),
    extra: {
      video_id: videoId,
      privacy_status:
        typeof state.video.status?.privacyStatus === "string" ? state.video.status.privacyStatus : null,
    },
    provider: { operation: YOUTUBE_OPERATIONS.videos, requestId: null, statusCode: input.statusCode },
  };
  return { state: "published", item };
}

/**
 * One processing check of an uploaded video. The video exists, so a status read that fails (a
 * spent quota, YouTube unreachable or refusing the read) keeps the item pending rather than failing
 * the post (a retry would upload it again), until the 24-hour limit, which fails it naming the video.
 */
async function checkProcessing(
  yt: YouTubePublishing,
  input: {
    destination: DestinationRef;
    videoId: string;
    uploadedAt: number;
    since: number;
  },
): Promise<PendingStatus> {
  const { destination, videoId } = input;
  let state: VideoState | null = null;
  let retryAt = 0;
  let unread = "";
  try {
    state = await yt.uploads.videoState({ destination, videoId });
  } catch (error) {
    // An expired or revoked token is the engine's to renew; any other failure to read is waited out.
    if (!(error instanceof ProviderError) || error.kind === "auth_expired" || error.kind === "auth_revoked")
      throw error;
    retryAt = error.retryAt ?? 0;
    unread = error.message;
  }
  const now = yt.deps.clock.now();
  if (state?.state === "missing" && now - input.uploadedAt > MISSING_GRACE_MS)
    throw new ProviderError("rejected", `YouTube no longer lists ${watchUrl(videoId)} (deleted?)`, {
      operation: YOUTUBE_OPERATIONS.videos,
    });
  const done = state && settled(yt, { destination, videoId, state, statusCode: 200 });
  if (done) return done;
  if (now - input.since > YOUTUBE_MAX_PROCESSING_MS)
    throw new ProviderError(
      "rejected",
      state
        ? `YouTube has not finished processing ${watchUrl(videoId)} within 24 hours; check it in ` +
            `YouTube Studio (retrying uploads the video again)`
        : `the status of ${watchUrl(videoId)} could not be read for 24 hours (${unread}); check it in ` +
            `YouTube Studio (retrying uploads the video again)`,
      { operation: YOUTUBE_OPERATIONS.videos },
    );
  const wait = Math.min(YOUTUBE_MAX_RECHECK_MS, Math.max(YOUTUBE_RECHECK_MS, (now - input.since) / 10));
  return { state: "pending", checkAgainAt: Math.max(retryAt, now + Math.round(wait)) };
}

/** The session's metadata from the post: title, description, options (privacy public by default). */
function metadataOf(item: PublishItemInput): VideoMetadata {
  const options = item.options;
  const tags = Array.isArray(options.tags) ? options.tags.filter((t) => typeof t === "string") : [];
  const snippet: Record<string, unknown> = {
    title: titleOf({ headline: item.headline, text: item.text }),
    description: item.text,
  };
  if (tags.length > 0) snippet.tags = tags;
  if (typeof options.category_id === "string") snippet.categoryId = options.category_id;
  const status: Record<string, unknown> = {
    privacyStatus: typeof options.privacy_status === "string" ? options.privacy_status : "public",
  };
  if (typeof options.made_for_kids === "boolean") status.selfDeclaredMadeForKids = options.made_for_kids;
  const notify = options.notify_subscribers;
  return { snippet, status, notifySubscribers: typeof notify === "boolean" ? notify : null };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The public page of a video. */
export function watchUrl(videoId: string): string {
  return `https://www.youtube.com/watch?v=${encodeURIComponent(videoId)}`;
}

/** Continues a pending video: the upload while bytes are missing, then processing until it settles. */
async function continueYouTubeUpload(
  yt: YouTubePublishing,
  { destination, item, data, since }: Parameters<YouTubePublisher["checkPending"]>[0],
): Promise<PendingStatus> {
  if (typeof data.video_id === "string" && data.video_id !== "")
    return checkProcessing(yt, {
      destination,
      videoId: data.video_id,
      uploadedAt: typeof data.uploaded_at === "number" ? data.uploaded_at : since,
      since,
    });
  const sessionUri = data.session_uri;
  if (!sessionUriIsSafe({ destination, sessionUri }) || typeof data.total !== "number")
    return { state: "gone", reason: "the pending YouTube upload session could not be read" };
  const video = item.media.find(isVideo);
  if (!video)
    throw new ProviderError("rejected", "the post's video is no longer attached", {
      operation: "checkPending",
    });
  const bytes = await video.read();
  if (bytes.length !== data.total)
    throw new ProviderError(
      "rejected",
      `the video is ${bytes.length} bytes but its upload session was opened for ${data.total}`,
      { operation: "checkPending" },
    );
  const outcome = await yt.uploads.upload({
    destination,
    sessionUri: sessionUri as string,
    bytes,
    contentType: typeof data.content_type === "string" ? data.content_type : video.contentType,
  });
  if (outcome.kind === "expired")
    return {
      state: "gone",
      reason: `YouTube's upload session expired (${outcome.statusCode}) before it had the whole video`,
    };
  return afterUpload(yt, { destination, video: outcome.video, statusCode: outcome.statusCode });
}
