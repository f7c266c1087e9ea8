// X's numbers (providers.md §1.5, §10): GET /2/tweets?ids= (up to 100 posts a call) with
// `public_metrics`, `non_public_metrics` for posts younger than 30 days (X keeps those that long,
// for the author's own user token only), and the view count of an attached video.
import { X_OPERATIONS, xBase, xBearer, xJson } from "./http.ts";
import type { DestinationRef, MetricName, MetricsResult, MetricsTarget, ProviderDeps } from "../types.ts";

/** Posts one lookup takes (GET /2/tweets?ids= accepts 1 to 100 ids). */
export const X_METRICS_BATCH_SIZE = 100;

/** X answers `non_public_metrics` only for posts younger than this. */
export const X_NON_PUBLIC_MAX_AGE_MS = 30 * 24 * 60 * 60_000;

/** The problem type of a field X will not show (non-public metrics of an old post, or another's). */
const FIELD_NOT_AUTHORIZED = /\/problems\/not-authorized-for-field$/;

type Values = Partial<Record<MetricName, number>>;

/**
 * Reads the numbers of up to 100 posts: one lookup for the posts younger than 30 days (with their
 * non-public metrics) and one for older ones (public metrics only). A post X does not return
 * (deleted, protected, suspended) is `missing`; a post returned without its non-public metrics
 * (X refused the field) has its public ones.
 */
export async function fetchXMetrics(
  deps: ProviderDeps,
  input: { destination: DestinationRef; targets: MetricsTarget[] },
): Promise<MetricsResult[]> {
  const { destination, targets } = input;
  const results: MetricsResult[] = [];
  const readable: MetricsTarget[] = [];
  for (const target of targets) {
    if (/^\d{1,19}$/.test(target.providerObjectId)) readable.push(target);
    else
      results.push({
        providerObjectId: target.providerObjectId,
        kind: "missing",
        reason: "the receipt holds no X post id",
      });
  }
  const now = deps.clock.now();
  const recent = readable.filter((t) => now - t.publishedAt < X_NON_PUBLIC_MAX_AGE_MS);
  const older = readable.filter((t) => now - t.publishedAt >= X_NON_PUBLIC_MAX_AGE_MS);
  if (recent.length > 0) results.push(...(await lookup(deps, destination, recent, true)));
  if (older.length > 0) results.push(...(await lookup(deps, destination, older, false)));
  return results;
}

/**
 * One GET /2/tweets for `targets`; posts X left out only because of the non-public field are asked
 * again without it.
 */
async function lookup(
  deps: ProviderDeps,
  destination: DestinationRef,
  targets: MetricsTarget[],
  nonPublic: boolean,
): Promise<MetricsResult[]> {
  const ids = [...new Set(targets.map((t) => t.providerObjectId))];
  const query = new URLSearchParams({
    ids: ids.join(","),
    "tweet.fields": nonPublic ? "public_metrics,non_public_metrics" : "public_metrics",
    expansions: "attachments.media_keys",
    "media.fields": "public_metrics",
  });
  const body = await xJson({
    deps,
    operation: X_OPERATIONS.lookup,
    url: `${xBase(destination.origin)}/2/tweets?${query}`,
    init: { headers: xBearer(destination) },
    idempotent: true,
  });
  const tweets: Record<string, any>[] = Array.isArray(body.data) ? body.data : [];
  const errors: Record<string, any>[] = Array.isArray(body.errors) ? body.errors : [];
  const media: Record<string, any>[] = Array.isArray(body.includes?.media) ? body.includes.media : [];
  const results: MetricsResult[] = [];
  const askAgain: MetricsTarget[] = [];
  for (const target of targets) {
    const id = target.providerObjectId;
    const tweet = tweets.find((t) => String(t.id) === id);
    if (tweet) {
      results.push({
        providerObjectId: id,
        kind: "metrics",
        values: valuesOf(tweet, media),
        providerAsOf: null,
      });
      continue;
    }
    const problems = errors.filter((e) => String(e.resource_id ?? e.value ?? "") === id);
    if (
      nonPublic &&
      problems.length > 0 &&
      problems.every((e) => FIELD_NOT_AUTHORIZED.test(String(e.type)))
    ) {
      askAgain.push(target);
      continue;
    }
    const detail = problems.map((e) => e.detail ?? e.title).find((d) => typeof d === "string" && d !== "");
    results.push({
      providerObjectId: id,
      kind: "missing",
      reason: detail ?? "X did not return the post (deleted, or not visible to the account)",
    });
  }
  if (askAgain.length > 0) results.push(...(await lookup(deps, destination, askAgain, false)));
  return results;
}

/**
 * The contract's metrics from one post, only those X reported: views are the video's view count when
 * the post has a video, else the public impression count; impressions and link clicks are
 * non-public (X leaves `url_link_clicks` out for a post without a link).
 */
function valuesOf(tweet: Record<string, any>, media: Record<string, any>[]): Values {
  const values: Values = {};
  const pub: Record<string, unknown> = tweet.public_metrics ?? {};
  const priv: Record<string, unknown> = tweet.non_public_metrics ?? {};
  const keys: unknown[] = Array.isArray(tweet.attachments?.media_keys) ? tweet.attachments.media_keys : [];
  const videoViews = media
    .filter((m) => keys.includes(m.media_key) && m.type === "video")
    .map((m) => count(m.public_metrics?.view_count))
    .find((v) => v !== null);
  set(values, "views", videoViews ?? count(pub.impression_count));
  set(values, "impressions", count(priv.impression_count));
  set(values, "comments", count(pub.reply_count));
  set(values, "reactions", count(pub.like_count));
  set(values, "shares", sum(count(pub.retweet_count), count(pub.quote_count)));
  set(values, "saves", count(pub.bookmark_count));
  set(values, "link_clicks", count(priv.url_link_clicks));
  return values;
}

function count(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : null;
}

/** The sum of the counts present; null when none is. */
function sum(...values: (number | null)[]): number | null {
  const present = values.filter((v): v is number => v !== null);
  return present.length === 0 ? null : present.reduce((a, b) => a + b, 0);
}

function set(values: Values, name: MetricName, value: number | null): void {
  if (value !== null) values[name] = value;
}
