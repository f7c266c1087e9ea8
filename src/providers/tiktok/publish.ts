// Publishing one TikTok post (providers.md §8.2): read the creator's settings, refuse what they do not
// allow, then init the post ONCE (a second init is a second post). A video (FILE_UPLOAD) is handed
// back pending right after its init with {publish_id, upload_url}: its chunks are PUT inside status
// checks, which resume from what TikTok reports (`uploaded_bytes`) after a cut connection, a 5xx or
// a dead process, and never init again. Photos are pulled by TikTok from Herald's signed URLs. Both
// are then followed with status fetches until PUBLISH_COMPLETE (the receipt) or FAILED (`rejected`).
import { readTikTokStatus, TIKTOK_OPERATIONS, tiktokPost, type TikTokAnswer } from "./api.ts";
import {
  checkTikTokItem,
  TIKTOK_PHOTO_TITLE_MAX,
  tiktokPostKind,
  type TikTokOptions,
  type TikTokPostKind,
} from "./rules.ts";
import { chunkPlan, failedPost, pendingDataOf, uploadVideo, type TikTokPendingData } from "./upload.ts";
import {
  ProviderError,
  type AdapterDeps,
  type DestinationRef,
  type PendingItem,
  type PublishedItem,
  type PublishItemInput,
  type PendingPublisher,
} from "../types.ts";

/** What the TikTok adapter is built with; `tiktokChunkBytes` sizes upload chunks (tests). */
export interface TikTokDeps extends AdapterDeps {
  tiktokChunkBytes?: number;
}

/** The first status check after a post went pending; checks then back off to `TIKTOK_MAX_RECHECK_MS`. */
export const TIKTOK_FIRST_RECHECK_MS = 5_000;
/** The longest pause between two status checks of one post. */
export const TIKTOK_MAX_RECHECK_MS = 5 * 60_000;
/**
 * How long a public post that TikTok reports PUBLISH_COMPLETE is still checked for its post id (it
 * appears after moderation, usually within a minute); after that the receipt is the publish id.
 */
export const TIKTOK_POST_ID_WAIT_MS = 10 * 60_000;
/** A post still processing this long after its init is given up on as `outcome_unknown`. */
export const TIKTOK_MAX_PROCESSING_MS = 24 * 60 * 60_000;
/**
 * Default pause between two status fetches inside one call: 30 fetches a minute per user is
 * TikTok's limit, so one every 2 s.
 */
const DEFAULT_STATUS_INTERVAL_MS = 2000;

/** The creator's posting settings TikTok requires reading before each post. */
export interface CreatorInfo {
  username: string;
  nickname: string;
  avatarUrl: string | null;
  privacyLevels: string[];
  commentDisabled: boolean;
  duetDisabled: boolean;
  stitchDisabled: boolean;
  maxVideoSeconds: number | null;
}

/** The publishing half of the TikTok adapter. */
export interface TikTokPublisher extends PendingPublisher {
  creatorInfo(destination: DestinationRef): Promise<CreatorInfo>;
}

/** Where one round of status fetches left a post. */
type Progress =
  | { state: "published"; item: PublishedItem }
  | { state: "pending"; data: TikTokPendingData }
  | { state: "failed"; reason: string };

/** Builds the publishing flow over `deps` (fetch, clock, poll pace, chunk size). */
export function createTikTokPublisher(deps: TikTokDeps): TikTokPublisher {
  const statusIntervalMs = statusIntervalOf(deps);

  return {
    creatorInfo: (destination) => creatorInfo(deps, destination),

    async publishItem(input) {
      const kind = tiktokPostKind(input.media);
      // Every URL is signed before anything is sent: a failure here leaves nothing on the network.
      const urls = kind === "photo" ? input.media.map((m) => m.publicUrl()) : [];
      const problems = checkTikTokItem({
        text: input.text,
        media: input.media,
        options: input.options,
        limits: input.destination.limits,
        publicMediaUrls: true,
        externalId: input.destination.externalId,
      });
      if (problems.length > 0 || kind === null)
        throw refused(problems.map((p) => p.detail).join("; ") || "TikTok needs a video or photos", null);
      const creator = await creatorInfo(deps, input.destination);
      const info = postInfo(input, creator, kind);
      if (kind === "video") {
        // Pending at once: the upload runs in checks that can be repeated, even after a crash.
        const { data, answer } = await initVideo(deps, input, info, creator);
        return pendingItem(data, answer, TIKTOK_OPERATIONS.videoInit, deps.clock.now());
      }
      const { data, answer } = await initPhotos(deps, input, info, creator, urls);
      // The post exists now: only a FAILED status may still refuse it; anything else is checked later.
      let progress: Progress;
      try {
        progress = await follow(deps, input.destination, data);
      } catch {
        return pendingItem(
          data,
          answer,
          TIKTOK_OPERATIONS.photoInit,
          deps.clock.now() + TIKTOK_FIRST_RECHECK_MS,
        );
      }
      if (progress.state === "published") return progress.item;
      if (progress.state === "failed") throw failedPost(data, progress.reason);
      return pendingItem(
        progress.data,
        answer,
        TIKTOK_OPERATIONS.photoInit,
        deps.clock.now() + TIKTOK_FIRST_RECHECK_MS,
      );
    },

    /**
     * Continues a pending post: uploads what TikTok lacks of the video (resuming, never a new init),
     * then follows its status. FAILED is `rejected` (nothing was published); still processing after
     * `TIKTOK_MAX_PROCESSING_MS` is `outcome_unknown`.
     */
    async checkPending({ destination, item, data, since }) {
      let current = pendingDataOf(data);
      if (!current.uploaded) {
        await uploadVideo({ deps, destination, item, data: current, pauseMs: statusIntervalMs });
        current = { ...current, uploaded: true };
      }
      const progress = await follow(deps, destination, current);
      if (progress.state === "published") return { state: "published", item: progress.item };
      if (progress.state === "failed") throw failedPost(current, progress.reason);
      const now = deps.clock.now();
      if (now - since > TIKTOK_MAX_PROCESSING_MS)
        throw new ProviderError(
          "outcome_unknown",
          `TikTok was still processing post ${current.publish_id} a day after it was sent; check the profile`,
          { operation: TIKTOK_OPERATIONS.status },
        );
      const checks = progress.data.checks + 1;
      const wait = Math.min(TIKTOK_FIRST_RECHECK_MS * 2 ** (checks - 1), TIKTOK_MAX_RECHECK_MS);
      return { state: "pending", checkAgainAt: now + wait, data: { ...progress.data, checks } };
    },
  };
}

async function creatorInfo(deps: TikTokDeps, destination: DestinationRef): Promise<CreatorInfo> {
  const { data } = await tiktokPost({
    deps,
    destination,
    operation: TIKTOK_OPERATIONS.creatorInfo,
    path: "/v2/post/publish/creator_info/query/",
    idempotent: true,
  });
  const text = (v: unknown) => (typeof v === "string" ? v : "");
  const seconds = Number(data.max_video_post_duration_sec);
  return {
    username: text(data.creator_username),
    nickname: text(data.creator_nickname),
    avatarUrl: typeof data.creator_avatar_url === "string" ? data.creator_avatar_url : null,
    privacyLevels: Array.isArray(data.privacy_level_options) ? data.privacy_level_options.map(String) : [],
    commentDisabled: data.comment_disabled === true,
    duetDisabled: data.duet_disabled === true,
    stitchDisabled: data.stitch_disabled === true,
    maxVideoSeconds: Number.isFinite(seconds) && seconds > 0 ? seconds : null,
  };
}

/**
 * `post_info` from the options and the creator's settings. Refuses (`rejected`, nothing sent) a
 * privacy level TikTok does not offer this creator and a video longer than it allows. An interaction
 * the creator turned off stays off; one the post does not turn on is off (TikTok's posting
 * guidelines: nothing pre-selected for the user).
 */
function postInfo(input: PublishItemInput, creator: CreatorInfo, kind: TikTokPostKind) {
  const options = input.options as TikTokOptions;
  const privacy = options.privacy_level;
  if (!privacy || !creator.privacyLevels.includes(privacy))
    throw refused(
      `TikTok offers @${creator.username || input.destination.handle} the privacy levels ` +
        `${creator.privacyLevels.join(", ") || "(none)"}; privacy_level ${privacy ?? "(not set)"} is not one of them`,
      "privacy_level_option_mismatch",
    );
  const common = {
    privacy_level: privacy,
    disable_comment: creator.commentDisabled || options.disable_comment !== false,
    brand_content_toggle: options.brand_content_toggle === true,
    brand_organic_toggle: options.brand_organic_toggle === true,
  };
  if (kind === "photo")
    return { title: cutUtf16(input.headline, TIKTOK_PHOTO_TITLE_MAX), description: input.text, ...common };
  const duration = input.media[0]?.durationSec;
  if (typeof duration === "number" && creator.maxVideoSeconds !== null && duration > creator.maxVideoSeconds)
    throw refused(
      `the video is ${duration} s long; TikTok lets @${creator.username || input.destination.handle} post ` +
        `videos up to ${creator.maxVideoSeconds} s`,
      "duration_check_failed",
    );
  return {
    title: input.text,
    ...common,
    disable_duet: creator.duetDisabled || options.disable_duet !== false,
    disable_stitch: creator.stitchDisabled || options.disable_stitch !== false,
    is_aigc: options.is_aigc === true,
    ...(options.video_cover_timestamp_ms === undefined
      ? {}
      : { video_cover_timestamp_ms: options.video_cover_timestamp_ms }),
  };
}

/** The video's init (FILE_UPLOAD): NOT idempotent, answers publish_id and the upload URL. */
async function initVideo(
  deps: TikTokDeps,
  input: PublishItemInput,
  info: Record<string, unknown>,
  creator: CreatorInfo,
) {
  const video = input.media[0]!;
  const plan = chunkPlan(video.byteSize, deps.tiktokChunkBytes);
  const answer = await tiktokPost({
    deps,
    destination: input.destination,
    operation: TIKTOK_OPERATIONS.videoInit,
    path: "/v2/post/publish/video/init/",
    body: {
      post_info: info,
      source_info: {
        source: "FILE_UPLOAD",
        video_size: video.byteSize,
        chunk_size: plan.chunkSize,
        total_chunk_count: plan.count,
      },
    },
    idempotent: false,
  });
  const { publish_id: publishId, upload_url: uploadUrl } = answer.data;
  if (typeof publishId !== "string" || publishId === "" || typeof uploadUrl !== "string" || uploadUrl === "")
    throw new ProviderError(
      "outcome_unknown",
      `${TIKTOK_OPERATIONS.videoInit}: TikTok accepted the post but its answer has no publish_id or upload_url`,
      { operation: TIKTOK_OPERATIONS.videoInit, statusCode: answer.status, requestId: answer.logId },
    );
  const data: TikTokPendingData = {
    media_type: "video",
    publish_id: publishId,
    upload_url: uploadUrl,
    video_size: video.byteSize,
    chunk_size: plan.chunkSize,
    total_chunk_count: plan.count,
    uploaded: false,
    username: creator.username || input.destination.handle,
    privacy_level: String(info.privacy_level),
    checks: 0,
    complete_since: null,
  };
  return { data, answer };
}

/** The photo post's init (PULL_FROM_URL from Herald's signed URLs): NOT idempotent. */
async function initPhotos(
  deps: TikTokDeps,
  input: PublishItemInput,
  info: Record<string, unknown>,
  creator: CreatorInfo,
  urls: string[],
) {
  const answer = await tiktokPost({
    deps,
    destination: input.destination,
    operation: TIKTOK_OPERATIONS.photoInit,
    path: "/v2/post/publish/content/init/",
    body: {
      post_info: info,
      source_info: { source: "PULL_FROM_URL", photo_cover_index: 0, photo_images: urls },
      post_mode: "DIRECT_POST",
      media_type: "PHOTO",
    },
    idempotent: false,
  });
  const publishId = answer.data.publish_id;
  if (typeof publishId !== "string" || publishId === "")
    throw new ProviderError(
      "outcome_unknown",
      `${TIKTOK_OPERATIONS.photoInit}: TikTok accepted the post but its answer has no publish_id`,
      { operation: TIKTOK_OPERATIONS.photoInit, statusCode: answer.status, requestId: answer.logId },
    );
  const data: TikTokPendingData = {
    media_type: "photo",
    publish_id: publishId,
    upload_url: null,
    video_size: 0,
    chunk_size: 0,
    total_chunk_count: 0,
    uploaded: true,
    username: creator.username || input.destination.handle,
    privacy_level: String(info.privacy_level),
    checks: 0,
    complete_since: null,
  };
  return { data, answer };
}

/** Status fetches until the post is out, failed, or the inline polls are used up. */
async function follow(
  deps: TikTokDeps,
  destination: DestinationRef,
  data: TikTokPendingData,
): Promise<Progress> {
  const maxPolls = Math.max(1, deps.maxPolls ?? 5);
  let current = data;
  for (let poll = 1; ; poll++) {
    const status = await readTikTokStatus({ deps, destination, publishId: current.publish_id });
    if (status.status === "FAILED") return { state: "failed", reason: status.failReason ?? "UNKNOWN" };
    if (status.status === "SEND_TO_USER_INBOX")
      return { state: "published", item: receipt(current, null, status.answer) };
    if (status.status === "PUBLISH_COMPLETE") {
      const postId = status.postIds[0] ?? null;
      const completeSince = current.complete_since ?? deps.clock.now();
      // A private post never gets a public id; a public one gets it after moderation.
      const waited = deps.clock.now() - completeSince >= TIKTOK_POST_ID_WAIT_MS;
      if (postId !== null || current.privacy_level === "SELF_ONLY" || waited)
        return { state: "published", item: receipt(current, postId, status.answer) };
      current = { ...current, complete_since: completeSince };
    }
    if (poll >= maxPolls) return { state: "pending", data: current };
    await sleep(statusIntervalOf(deps));
  }
}

function pendingItem(
  data: TikTokPendingData,
  answer: TikTokAnswer,
  operation: string,
  at: number,
): PendingItem {
  return {
    pending: true,
    data: { ...data },
    checkAgainAt: at,
    provider: { operation, requestId: answer.logId, statusCode: answer.status },
  };
}

/**
 * The receipt of a published post: its public post id and URL (`/@user/video/<id>` for a video; a
 * photo post's URL shape is not documented, so its receipt URL is the profile's), or, while TikTok has
 * not given the id (a private post, moderation still running), the publish id and the profile URL.
 * `extra` keeps both ids, the kind of post and its privacy level (analytics reads them).
 */
function receipt(data: TikTokPendingData, postId: string | null, answer: TikTokAnswer): PublishedItem {
  const profile = data.username
    ? `https://www.tiktok.com/@${encodeURIComponent(data.username)}`
    : "https://www.tiktok.com/";
  const url =
    postId !== null && data.media_type === "video" && data.username ? `${profile}/video/${postId}` : profile;
  return {
    providerObjectId: postId ?? data.publish_id,
    url,
    extra: {
      publish_id: data.publish_id,
      post_id: postId,
      media_type: data.media_type,
      // Analytics: a private post never gets the public id TikTok's video.query needs.
      privacy_level: data.privacy_level,
    },
    provider: { operation: TIKTOK_OPERATIONS.status, requestId: answer.logId, statusCode: answer.status },
  };
}

/** A refusal before anything was sent. */
function refused(message: string, errorCode: string | null): ProviderError {
  return new ProviderError("rejected", message, { operation: "publishItem", errorCode });
}

/** Cuts text to `max` UTF-16 units without splitting a character. */
function cutUtf16(text: string, max: number): string {
  if (text.length <= max) return text;
  let out = "";
  for (const char of text) {
    if (out.length + char.length > max) break;
    out += char;
  }
  return out;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The pause between inline status fetches (and upload retries). */
function statusIntervalOf(deps: TikTokDeps): number {
  return deps.pollIntervalMs ?? DEFAULT_STATUS_INTERVAL_MS;
}
