// What Herald knows of X without talking to it: `destination_options.x`, the rules every body item
// is checked against before sending, and the caps the engine counts.
import { Type } from "@sinclair/typebox";
import { countGraphemes, unattachedAltTextProblems } from "../text.ts";
import { X_MAX_WEIGHTED_LENGTH, xTextFacts } from "./text.ts";
import type { ChannelLimits, ItemProblem, MediaFacts, NetworkRules } from "../types.ts";

const MB = 1024 * 1024;

/** Largest GIF X accepts, bytes (15 MB). */
export const X_MAX_GIF_BYTES = 15 * MB;
/** Largest video X accepts, bytes (512 MB). */
export const X_MAX_VIDEO_BYTES = 512 * MB;
/** Longest alt text X's media metadata takes, characters. */
export const X_MAX_ALT_TEXT = 1000;

/** A standard X account's limits: 280 weighted characters, 4 images or 1 video, images ≤ 5 MB. */
export const X_LIMITS: ChannelLimits = {
  maxCharacters: X_MAX_WEIGHTED_LENGTH,
  maxImages: 4,
  maxVideos: 1,
  maxImageBytes: 5 * MB,
};

/**
 * Longest post of an account with an X subscription (Basic, Premium or Premium+: "longer posts"), in
 * weighted characters; X sends such posts as long posts through the same create call.
 */
export const X_SUBSCRIBER_MAX_WEIGHTED_LENGTH = 25_000;

/** X's `subscription_type` values (users/me) that come with longer posts. */
const LONG_POST_SUBSCRIPTIONS = new Set(["Basic", "Premium", "PremiumPlus"]);

/** The limits of an account by its `subscription_type` as users/me reports it (absent: a standard account). */
export function xLimitsFor(subscriptionType: unknown): ChannelLimits {
  const subscribed = typeof subscriptionType === "string" && LONG_POST_SUBSCRIPTIONS.has(subscriptionType);
  return {
    ...X_LIMITS,
    maxCharacters: subscribed ? X_SUBSCRIBER_MAX_WEIGHTED_LENGTH : X_MAX_WEIGHTED_LENGTH,
  };
}

/** How X handles a content type: a still image, an animated GIF, a video; null when X refuses it. */
export type XMediaKind = "image" | "gif" | "video";

const KIND_BY_TYPE: Record<string, XMediaKind> = {
  "image/jpeg": "image",
  "image/png": "image",
  "image/webp": "image",
  "image/gif": "gif",
  "video/mp4": "video",
  "video/quicktime": "video",
};

/** The X media kind of a content type (parameters ignored), or null when X does not take it. */
export function xMediaKind(contentType: string): XMediaKind | null {
  return KIND_BY_TYPE[contentType.split(";")[0]!.trim().toLowerCase()] ?? null;
}

/**
 * The alt text of a media item: its own, else `destination_options.x.alt_text_by_asset_id`; null when none.
 */
export function xAltText(
  media: { assetId: string; altText: string | null },
  options: Record<string, unknown>,
) {
  const byId = (options.alt_text_by_asset_id ?? {}) as Record<string, unknown>;
  const alt = media.altText ?? byId[media.assetId];
  return typeof alt === "string" && alt.trim() !== "" ? alt : null;
}

/**
 * X's rules for one post: no URLs (the contract; what X links, by twitter-text), at most
 * `maxCharacters` weighted characters (twitter-text v3), none of the characters X refuses, up to
 * four images or one GIF or one video (never mixed), X's content types and sizes (image ≤
 * `maxImageBytes`, GIF ≤ 15 MB, video ≤ 512 MB), alt text ≤ 1000 characters.
 * Destinations stored without limits (rows from before the adapter) get X's standard ones.
 */
export function checkXItem(input: {
  text: string;
  media: MediaFacts[];
  options: Record<string, unknown>;
  limits: Partial<ChannelLimits> | null | undefined;
}): ItemProblem[] {
  const { text, media, options } = input;
  const limits = xLimitsOf(input.limits);
  const problems: ItemProblem[] = [];
  problems.push(...xTextProblems(text, limits.maxCharacters));
  const kinds = media.map((m) => xMediaKind(m.contentType));
  const moving = kinds.filter((k) => k === "gif" || k === "video").length;
  if (moving > 0 && media.length > 1)
    problems.push({
      pointer: "/media",
      detail: "an X post takes up to four images, or one GIF, or one video, never mixed",
    });
  let images = 0;
  media.forEach((m, i) => {
    const pointer = `/media/${i}`;
    const kind = kinds[i];
    if (kind === null)
      return void problems.push({
        pointer,
        detail: `X takes JPEG, PNG, WebP and GIF images and MP4 or MOV videos, not ${m.contentType}`,
      });
    if (kind === "image" && ++images > limits.maxImages)
      problems.push({ pointer, detail: `an X post takes at most ${limits.maxImages} images` });
    const max =
      kind === "image" ? limits.maxImageBytes : kind === "gif" ? X_MAX_GIF_BYTES : X_MAX_VIDEO_BYTES;
    if (m.byteSize > max)
      problems.push({ pointer, detail: `${kind} is ${m.byteSize} bytes; X takes at most ${max}` });
    const alt = xAltText(m, options);
    if (alt !== null && [...alt].length > X_MAX_ALT_TEXT)
      problems.push({ pointer, detail: `alt text is longer than ${X_MAX_ALT_TEXT} characters` });
  });
  return problems;
}

function positiveLimits(limits: Partial<ChannelLimits> | null | undefined): Partial<ChannelLimits> {
  const out: Partial<ChannelLimits> = {};
  for (const [key, value] of Object.entries(limits ?? {}))
    if (typeof value === "number" && Number.isInteger(value) && value > 0)
      out[key as keyof ChannelLimits] = value;
  return out;
}

/**
 * X's rules: `destination_options.x`, text and media limits, the documented cap and the contract's monthly
 * limit.
 */
export const X_RULES: NetworkRules = {
  channel: "x",
  displayName: "X",
  defaultLimits: X_LIMITS,
  optionsSchema: Type.Object(
    {
      alt_text_by_asset_id: Type.Optional(
        Type.Record(Type.String(), Type.String({ maxLength: X_MAX_ALT_TEXT })),
      ),
    },
    { additionalProperties: false },
  ),
  checkOptions: ({ options, assetIds }) => unattachedAltTextProblems(options, assetIds),
  checkItem: (input) => checkXItem(input),
  measureText: ({ text, limits }) => [
    {
      used: xWeightedLength(text, xLimitsOf(limits).maxCharacters),
      limit: xLimitsOf(limits).maxCharacters,
      unit: "characters",
    },
  ],
  supportsThreads: true,
  // X refuses a post identical to a recent one ("duplicate content").
  refusesRepeats: true,
  // 300 posts per 3 h per user.
  dailyCap: 2_400,
  // The contract's `x_usage`: posts per workspace per calendar month (the engine counts them).
  monthlyPostLimit: 50,
};

/**
 * A body far over the limit is refused without asking twitter-text, whose URL pattern is slow on long
 * runs: every grapheme weighs at least 1 as X counts and any link is refused, so the grapheme count is
 * a floor of X's count. This bounds the library's work per item to a few times the limit.
 */
const FAR_OVER = 4;

/** A destination's limits over X's standard ones (rows stored before the adapter have none). */
function xLimitsOf(limits: Partial<ChannelLimits> | null | undefined): ChannelLimits {
  return { ...X_LIMITS, ...positiveLimits(limits) };
}

/** The text's weighted length as X counts it; far over the limit, its grapheme count (a floor of it). */
function xWeightedLength(text: string, maxCharacters: number): number {
  const graphemes = countGraphemes(text);
  return graphemes > FAR_OVER * maxCharacters ? graphemes : xTextFacts(text).weightedLength;
}

function xTextProblems(text: string, maxCharacters: number): ItemProblem[] {
  const lengthProblem = (count: string) => ({
    pointer: "",
    detail: `text is ${count} characters as X counts them (CJK characters and emoji count 2); X allows ${maxCharacters}`,
  });
  const graphemes = countGraphemes(text);
  if (graphemes > FAR_OVER * maxCharacters) return [lengthProblem(`at least ${graphemes}`)];
  const facts = xTextFacts(text);
  const problems: ItemProblem[] = [];
  if (facts.urls.length > 0) problems.push({ pointer: "", detail: "X bodies cannot contain URLs" });
  if (facts.refusedCharacters)
    problems.push({ pointer: "", detail: "text contains a character X refuses (U+FFFE, U+FEFF or U+FFFF)" });
  if (facts.weightedLength > maxCharacters) problems.push(lengthProblem(String(facts.weightedLength)));
  return problems;
}
