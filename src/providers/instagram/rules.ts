// What Herald enforces for Instagram before anything is sent: media is required (no text-only posts),
// the caption's length and hashtags, JPEG images and MP4/MOV videos with their bounds, carousels of
// 2–10, media only when Meta can download it from Herald, and the options.
import { Type } from "@sinclair/typebox";
import { commentLengthProblems, firstCommentOption } from "../options.ts";
import { unattachedAltTextProblems } from "../text.ts";
import type { ChannelLimits, CheckItemInput, ItemProblem, NetworkRules } from "../types.ts";

/**
 * Instagram's limits: a 2,200-character caption; one image or video, or a carousel of 2–10; images up
 * to 8 MB (read as 8,000,000 bytes; Meta's figure is not confirmed).
 */
export const INSTAGRAM_LIMITS: ChannelLimits = {
  maxCharacters: 2200,
  maxImages: 10,
  maxVideos: 10,
  maxImageBytes: 8_000_000,
};

/** Most items of a carousel (and of one post); a carousel needs at least two. */
export const INSTAGRAM_MAX_MEDIA = 10;
/** Most hashtags in a caption. */
export const INSTAGRAM_MAX_HASHTAGS = 30;
/** Largest video Herald lets Meta fetch (the stricter of the 300 MB and 1 GB figures in circulation). */
export const INSTAGRAM_MAX_VIDEO_BYTES = 300_000_000;
/** A reel lasts 3 s to 15 min; checked when Herald knows the length. */
export const INSTAGRAM_VIDEO_SECONDS = { min: 3, max: 900 };
/** Feed images must be between 4:5 (portrait) and 1.91:1 (landscape), width over height. */
export const INSTAGRAM_ASPECT = { min: 0.8, max: 1.91 };
/** Longest alt text Herald sends with an image (Herald's bound; Meta documents none). */
export const INSTAGRAM_ALT_TEXT_MAX = 1000;

/**
 * A first comment on Instagram (`POST /{ig-media-id}/comments?message=…`, scope
 * instagram_manage_comments; developers.facebook.com/docs/instagram-platform/instagram-graph-api/
 * reference/ig-media/comments): Instagram takes comments of at most 2,200 characters like captions,
 * with at most 30 hashtags (Instagram's help on hashtags) and 5 @mentions (Instagram blocks comments
 * mentioning more people; Herald's bound from Instagram's spam rules as tools quote them).
 */
export const INSTAGRAM_COMMENT_MAX = 2200;
export const INSTAGRAM_COMMENT_MAX_HASHTAGS = 30;
export const INSTAGRAM_COMMENT_MAX_MENTIONS = 5;

/** Image types the Content Publishing API takes (JPEG only). */
export const INSTAGRAM_IMAGE_TYPES = ["image/jpeg"];
/** Video types it takes (MP4 and MOV). */
export const INSTAGRAM_VIDEO_TYPES = ["video/mp4", "video/quicktime"];

/** Instagram's rules: `destination_options.instagram`, the caption and media rules, 100 posts a day. */
export const INSTAGRAM_RULES: NetworkRules = {
  channel: "instagram",
  displayName: "Instagram",
  defaultLimits: INSTAGRAM_LIMITS,
  optionsSchema: Type.Object(
    {
      alt_text_by_asset_id: Type.Optional(
        Type.Record(Type.String(), Type.String({ maxLength: INSTAGRAM_ALT_TEXT_MAX })),
      ),
      first_comment: firstCommentOption(
        `Up to ${INSTAGRAM_COMMENT_MAX} characters, ${INSTAGRAM_COMMENT_MAX_HASHTAGS} hashtags and ` +
          `${INSTAGRAM_COMMENT_MAX_MENTIONS} @mentions.`,
      ),
    },
    { additionalProperties: false },
  ),
  checkOptions: ({ options, assetIds }) => unattachedAltTextProblems(options, assetIds),
  checkItem: (input) => checkInstagramItem(input),
  measureText: ({ text, limits }) => [
    { used: [...text].length, limit: limits.maxCharacters, unit: "characters" },
  ],
  checkFirstComment: (text) => checkInstagramComment(text),
  supportsThreads: false,
  // content_publishing_limit: 100 API-published posts per account in a rolling 24 h (a carousel is one).
  dailyCap: 100,
  monthlyPostLimit: null,
};

const HASHTAG = /(^|[^\p{L}\p{N}_&])#[\p{L}\p{N}_]+/gu;
const MENTION = /(^|[^\p{L}\p{N}_.])@[\p{L}\p{N}_.]+/gu;

/** Instagram's rules for a first comment: length, hashtags and @mentions. */
export function checkInstagramComment(text: string): string[] {
  const problems = commentLengthProblems(text, INSTAGRAM_COMMENT_MAX, "Instagram");
  const hashtags = text.match(HASHTAG)?.length ?? 0;
  if (hashtags > INSTAGRAM_COMMENT_MAX_HASHTAGS)
    problems.push(
      `first comment has ${hashtags} hashtags; Instagram allows ${INSTAGRAM_COMMENT_MAX_HASHTAGS} in a comment`,
    );
  const mentions = text.match(MENTION)?.length ?? 0;
  if (mentions > INSTAGRAM_COMMENT_MAX_MENTIONS)
    problems.push(
      `first comment mentions ${mentions} accounts; Instagram allows ${INSTAGRAM_COMMENT_MAX_MENTIONS} in a comment`,
    );
  return problems;
}

/**
 * Instagram's rules for one item: at least one media item; a caption of ≤ 2,200 characters (code
 * points) with ≤ 30 hashtags; up to 10 media, JPEG ≤ 8,000,000 bytes between 4:5 and 1.91:1, MP4/MOV
 * ≤ 300,000,000 bytes of 3 s–15 min; media only when Meta can fetch it from Herald's public URL.
 */
export function checkInstagramItem(input: CheckItemInput): ItemProblem[] {
  const { text, media, limits } = input;
  const problems: ItemProblem[] = [];
  if (media.length === 0)
    problems.push({
      pointer: "",
      detail: "an Instagram post needs an image or a video; text alone cannot be published",
    });
  const length = [...text].length;
  if (length > limits.maxCharacters)
    problems.push({
      pointer: "",
      detail: `caption is ${length} characters; Instagram allows ${limits.maxCharacters}`,
    });
  const hashtags = text.match(HASHTAG)?.length ?? 0;
  if (hashtags > INSTAGRAM_MAX_HASHTAGS)
    problems.push({
      pointer: "",
      detail: `caption has ${hashtags} hashtags; Instagram allows ${INSTAGRAM_MAX_HASHTAGS}`,
    });
  media.forEach((m, i) => {
    const pointer = `/media/${i}`;
    if (!input.publicMediaUrls)
      problems.push({
        pointer,
        detail:
          "Instagram downloads media from Herald's public URL; HERALD_BASE_URL must be a public https origin",
      });
    if (i >= INSTAGRAM_MAX_MEDIA)
      problems.push({
        pointer,
        detail: `an Instagram post takes at most ${INSTAGRAM_MAX_MEDIA} images and videos`,
      });
    if (INSTAGRAM_IMAGE_TYPES.includes(m.contentType)) {
      if (m.byteSize > limits.maxImageBytes)
        problems.push({
          pointer,
          detail: `image is ${m.byteSize} bytes; Instagram images may be at most ${limits.maxImageBytes}`,
        });
      if (m.width && m.height) {
        const ratio = m.width / m.height;
        if (ratio < INSTAGRAM_ASPECT.min || ratio > INSTAGRAM_ASPECT.max)
          problems.push({
            pointer,
            detail: `image is ${m.width}×${m.height}; Instagram takes images between 4:5 and 1.91:1`,
          });
      }
    } else if (INSTAGRAM_VIDEO_TYPES.includes(m.contentType)) {
      if (m.byteSize > INSTAGRAM_MAX_VIDEO_BYTES)
        problems.push({
          pointer,
          detail: `video is ${m.byteSize} bytes; Instagram videos may be at most ${INSTAGRAM_MAX_VIDEO_BYTES}`,
        });
      const seconds = m.durationSec ?? null;
      if (
        seconds !== null &&
        (seconds < INSTAGRAM_VIDEO_SECONDS.min || seconds > INSTAGRAM_VIDEO_SECONDS.max)
      )
        problems.push({
          pointer,
          detail: `video lasts ${seconds} s; Instagram takes videos of ${INSTAGRAM_VIDEO_SECONDS.min} s to 15 min`,
        });
    } else {
      problems.push({
        pointer,
        detail: `${m.contentType} cannot be posted on Instagram (JPEG images, MP4 or MOV videos)`,
      });
    }
  });
  return problems;
}
