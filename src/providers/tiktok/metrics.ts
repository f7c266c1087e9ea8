// TikTok's numbers (providers.md §8.5, §10): POST /v2/video/query/ (Display API, scope video.list)
// with `filters.video_ids` (up to 20 ids a call), asking only for the id and the four counts TikTok
// has: view_count, like_count, comment_count, share_count. TikTok documents the Display API as reading
// a creator's public videos, by their public post id. A receipt that holds only the publish id (the
// id came after Herald stopped waiting for moderation) is looked up in the publish status first; a
// private (SELF_ONLY) post never gets a public id and is `unsupported`.
import { TIKTOK_OPERATIONS, publicPostIds, tiktokBase, tiktokCall, tiktokPost } from "./api.ts";
import {
  ProviderError,
  type DestinationRef,
  type MetricName,
  type MetricsResult,
  type MetricsTarget,
  type ProviderDeps,
} from "../types.ts";

/** Posts one fetchMetrics call reads: video.query takes up to 20 ids (providers.md §8.5; cap unverified). */
export const TIKTOK_METRICS_BATCH_SIZE = 20;

/** The video fields Herald asks for: the id and the four counts. */
export const TIKTOK_METRICS_FIELDS = ["id", "view_count", "like_count", "comment_count", "share_count"];

/**
 * Status fetches one call makes at most to find the public id of posts whose receipt holds only a
 * publish id: TikTok allows 30 a minute per user, shared with publishing. The others wait for a later read.
 */
export const TIKTOK_METRICS_STATUS_READS = 5;

/**
 * A post TikTok still gives no public id this long after publication never will (a private post whose
 * receipt predates `privacy_level` in `extra`, or one held back by moderation): `unsupported`, so it
 * is not looked up again for a month.
 */
export const TIKTOK_POST_ID_GIVE_UP_MS = 24 * 60 * 60_000;

/** A TikTok post id: an int64 in decimal. */
const POST_ID = /^\d{1,20}$/;

/** One post to read in video.query, under the public id found for its target. */
interface Lookup {
  target: MetricsTarget;
  postId: string;
  photo: boolean;
}

/**
 * Reads the numbers of up to 20 posts in one video.query. A video TikTok leaves out of the answer is
 * `missing` (deleted, or no longer public); a photo post it leaves out is `unsupported` (video.query
 * is documented for videos; whether it returns photo posts is unverified). Whole-call failures
 * (an expired token: `auth_expired`; a missing video.list grant: `auth_revoked`; 429: a minute later;
 * 5xx) end the call.
 */
export async function fetchTikTokMetrics(
  deps: ProviderDeps,
  input: { destination: DestinationRef; targets: MetricsTarget[] },
): Promise<MetricsResult[]> {
  const { destination, targets } = input;
  const results: MetricsResult[] = [];
  const lookups: Lookup[] = [];
  /** Why publish ids are not looked up any more in this call (a throttled or failing status read). */
  let statusBlocked: string | null = null;
  let statusReads = 0;
  for (const target of targets) {
    const { providerObjectId, extra } = target;
    const photo = extra.media_type === "photo";
    const known = POST_ID.test(providerObjectId)
      ? providerObjectId
      : typeof extra.post_id === "string" && POST_ID.test(extra.post_id)
        ? extra.post_id
        : null;
    if (known !== null) {
      lookups.push({ target, postId: known, photo });
      continue;
    }
    if (extra.privacy_level === "SELF_ONLY") {
      results.push({
        providerObjectId,
        kind: "unsupported",
        reason:
          "a private (SELF_ONLY) TikTok post has no public id, and TikTok's video.query reads public videos by that id",
      });
      continue;
    }
    const publishId =
      typeof extra.publish_id === "string" && extra.publish_id !== "" ? extra.publish_id : null;
    if (publishId === null) {
      results.push({
        providerObjectId,
        kind: "missing",
        reason: "the receipt holds no TikTok post or publish id",
      });
      continue;
    }
    if (statusBlocked !== null || statusReads >= TIKTOK_METRICS_STATUS_READS) {
      results.push({
        providerObjectId,
        kind: "missing",
        reason:
          `the public id of TikTok post ${publishId} is looked up at a later read ` +
          `(${statusBlocked ?? "status reads are limited per call"})`,
      });
      continue;
    }
    statusReads++;
    const found = await publicIdOf(deps, destination, target, publishId);
    if (typeof found === "string") lookups.push({ target, postId: found, photo });
    else {
      results.push(found.result);
      if (found.blocked && found.result.kind !== "metrics") statusBlocked = found.result.reason;
    }
  }
  if (lookups.length > 0) results.push(...(await query(deps, destination, lookups)));
  return results;
}

/**
 * The public id of a post from its publish status (read-only), or the result for its target: not
 * given yet (`missing`, read again later), never to be given (`unsupported` a day after publication),
 * or a status TikTok refuses to read (`missing`). A throttled or failing status read stops further
 * status reads in this call (`blocked`); an expired or revoked token fails the call.
 */
async function publicIdOf(
  deps: ProviderDeps,
  destination: DestinationRef,
  target: MetricsTarget,
  publishId: string,
): Promise<string | { result: MetricsResult; blocked: boolean }> {
  const { providerObjectId } = target;
  let answer: Awaited<ReturnType<typeof tiktokPost>>;
  try {
    answer = await tiktokPost({
      deps,
      destination,
      operation: TIKTOK_OPERATIONS.status,
      path: "/v2/post/publish/status/fetch/",
      body: { publish_id: publishId },
      idempotent: true,
    });
  } catch (error) {
    if (!(error instanceof ProviderError) || (error.kind !== "rejected" && error.kind !== "transient"))
      throw error;
    return {
      result: { providerObjectId, kind: "missing", reason: error.message },
      blocked: error.kind === "transient",
    };
  }
  const postId = publicPostIds(answer.text)[0];
  if (postId !== undefined) return postId;
  const status = typeof answer.data.status === "string" ? answer.data.status : "";
  if (status === "FAILED")
    return {
      result: { providerObjectId, kind: "missing", reason: `TikTok reports post ${publishId} FAILED` },
      blocked: false,
    };
  if (deps.clock.now() - target.publishedAt >= TIKTOK_POST_ID_GIVE_UP_MS)
    return {
      result: {
        providerObjectId,
        kind: "unsupported",
        reason:
          `TikTok gave post ${publishId} no public id within a day (a private post, or one held ` +
          `back by moderation), and video.query reads posts by that id`,
      },
      blocked: false,
    };
  return {
    result: {
      providerObjectId,
      kind: "missing",
      reason: `TikTok has not given post ${publishId} its public id yet (${status || "no status"}; moderation can take hours)`,
    },
    blocked: false,
  };
}

/**
 * One video.query for `lookups`. When TikTok refuses the request itself (`invalid_params`: an id it
 * does not take), each post is asked alone, and a post refused alone is `missing`.
 */
async function query(
  deps: ProviderDeps,
  destination: DestinationRef,
  lookups: Lookup[],
): Promise<MetricsResult[]> {
  const ids = [...new Set(lookups.map((l) => l.postId))];
  const fields = new URLSearchParams({ fields: TIKTOK_METRICS_FIELDS.join(",") });
  const url = `${tiktokBase(destination.origin)}/v2/video/query/?${fields}`;
  let text: string;
  try {
    ({ text } = await tiktokCall({
      deps,
      operation: TIKTOK_OPERATIONS.videoQuery,
      url,
      init: {
        method: "POST",
        headers: {
          authorization: `Bearer ${String(destination.credentials.accessToken ?? "")}`,
          "content-type": "application/json; charset=UTF-8",
        },
        body: JSON.stringify({ filters: { video_ids: ids } }),
      },
      idempotent: true,
    }));
  } catch (error) {
    if (!(error instanceof ProviderError) || error.kind !== "rejected") throw error;
    if (ids.length === 1)
      return lookups.map(({ target }) => ({
        providerObjectId: target.providerObjectId,
        kind: "missing",
        reason: error.message,
      }));
    const alone: MetricsResult[] = [];
    for (const id of ids)
      alone.push(
        ...(await query(
          deps,
          destination,
          lookups.filter((l) => l.postId === id),
        )),
      );
    return alone;
  }
  const videos = videosOf(text);
  return lookups.map(({ target, postId, photo }): MetricsResult => {
    const video = videos.find((v) => String(v.id) === postId);
    if (video)
      return {
        providerObjectId: target.providerObjectId,
        kind: "metrics",
        values: valuesOf(video),
        providerAsOf: null,
      };
    if (photo)
      return {
        providerObjectId: target.providerObjectId,
        kind: "unsupported",
        reason: `TikTok's video.query did not return photo post ${postId}; it is documented for videos`,
      };
    return {
      providerObjectId: target.providerObjectId,
      kind: "missing",
      reason: `TikTok did not return video ${postId} (deleted, or no longer public)`,
    };
  });
}

/**
 * `data.videos` of a video.query answer. TikTok documents `id` as a string; an id sent as a bare JSON
 * number (an int64, too large for a JS number) is read as its digits.
 */
function videosOf(text: string): Record<string, any>[] {
  let body: Record<string, any>;
  try {
    body = JSON.parse(text.replace(/("id"\s*:\s*)(\d+)/g, '$1"$2"'));
  } catch {
    return [];
  }
  const videos = body?.data?.videos;
  return Array.isArray(videos) ? videos.filter((v) => v !== null && typeof v === "object") : [];
}

/** The four counts TikTok has, as the contract's metrics; only those in the answer. */
function valuesOf(video: Record<string, any>): Partial<Record<MetricName, number>> {
  const fields: [MetricName, string][] = [
    ["views", "view_count"],
    ["comments", "comment_count"],
    ["reactions", "like_count"],
    ["shares", "share_count"],
  ];
  const values: Partial<Record<MetricName, number>> = {};
  for (const [metric, field] of fields) {
    const raw: unknown = video[field];
    const value =
      typeof raw === "number" ? raw : typeof raw === "string" && /^\d+$/.test(raw) ? Number(raw) : NaN;
    if (Number.isFinite(value) && value >= 0) values[metric] = value;
  }
  return values;
}
