// What Herald enforces for Facebook Pages before anything is sent: text length, photo types and sizes,
// a video alone (it becomes a reel, with the reel's length bounds), and the `link` option.
import { Type } from "@sinclair/typebox";
import { commentLengthProblems, firstCommentOption } from "../options.ts";
import type { ChannelLimits, CheckItemInput, ItemProblem, NetworkRules } from "../types.ts";

/**
 * Facebook's limits: 63,206 characters (widely quoted, not documented by Meta), up to 10 photos a post
 * (Herald's own bound; Meta documents none), one video, photos up to 4 MB (read as 4,000,000 bytes).
 */
export const FACEBOOK_LIMITS: ChannelLimits = {
  maxCharacters: 63_206,
  maxImages: 10,
  maxVideos: 1,
  maxImageBytes: 4_000_000,
};

/** Photo types Herald sends (Meta's error 1366046 names JPEG and PNG). */
export const FACEBOOK_IMAGE_TYPES = ["image/jpeg", "image/png"];
/** Video types Herald sends as reels (MP4 recommended by Meta; MOV accepted). */
export const FACEBOOK_VIDEO_TYPES = ["video/mp4", "video/quicktime"];
/** Largest video Herald uploads in its single upload request ("1 GB" read as 10^9, Herald's bound). */
export const FACEBOOK_MAX_VIDEO_BYTES = 1_000_000_000;
/** A reel lasts 3 to 90 seconds (Meta's reels publishing guide); checked when Herald knows the length. */
export const FACEBOOK_REEL_SECONDS = { min: 3, max: 90 };

/**
 * The longest first comment Herald sends to a Page post: 8,000 characters. Graph's comment reference
 * (developers.facebook.com/docs/graph-api/reference/object/comments, `POST /{page-post-id}/comments`
 * with `message`, a Page token with pages_manage_engagement) documents no length; 8,000 is the figure
 * Facebook's comment box enforces and tools quote (Herald's bound, counted in code points).
 */
export const FACEBOOK_COMMENT_MAX = 8000;

/** Facebook's rules: `destination_options.facebook`, text and media limits; no daily cap documented. */
export const FACEBOOK_RULES: NetworkRules = {
  channel: "facebook",
  displayName: "Facebook",
  defaultLimits: FACEBOOK_LIMITS,
  optionsSchema: Type.Object(
    {
      link: Type.Optional(
        Type.String({
          pattern: "^https?://\\S+$",
          maxLength: 2048,
          title: "Link to share",
          description: "An http(s) address.",
        }),
      ),
      first_comment: firstCommentOption(`Up to ${FACEBOOK_COMMENT_MAX} characters.`),
    },
    { additionalProperties: false },
  ),
  checkOptions: ({ options, assetIds }) =>
    typeof options.link === "string" && assetIds.length > 0
      ? [{ pointer: "/link", detail: "a link post carries no media; remove the media or the link" }]
      : [],
  checkItem: (input) => checkFacebookItem(input),
  measureText: ({ text, limits }) => [
    { used: [...text].length, limit: limits.maxCharacters, unit: "characters" },
  ],
  checkFirstComment: (text) => commentLengthProblems(text, FACEBOOK_COMMENT_MAX, "Facebook"),
  supportsThreads: false,
  // Meta publishes no per-Page post cap (reels alone: 30 a day, enforced by Meta).
  dailyCap: null,
  monthlyPostLimit: null,
};

/** Whether a media item is posted as a reel. */
export function isFacebookVideo(contentType: string): boolean {
  return FACEBOOK_VIDEO_TYPES.includes(contentType);
}

/**
 * Facebook's rules for one item: text, a link or media; ≤ 63,206 characters (code points); up to 10
 * JPEG/PNG photos ≤ 4,000,000 bytes, or one MP4/MOV video alone (a reel of 3–90 s).
 */
export function checkFacebookItem(input: CheckItemInput): ItemProblem[] {
  const { text, media, limits, options } = input;
  const problems: ItemProblem[] = [];
  const length = [...text].length;
  if (text.trim() === "" && media.length === 0 && typeof options.link !== "string")
    problems.push({ pointer: "", detail: "a Facebook post needs text, a link or media" });
  if (length > limits.maxCharacters)
    problems.push({
      pointer: "",
      detail: `text is ${length} characters; Facebook allows ${limits.maxCharacters}`,
    });
  let images = 0;
  media.forEach((m, i) => {
    const pointer = `/media/${i}`;
    if (FACEBOOK_IMAGE_TYPES.includes(m.contentType)) {
      images++;
      if (images > limits.maxImages)
        problems.push({ pointer, detail: `a Facebook post takes at most ${limits.maxImages} photos` });
      if (m.byteSize > limits.maxImageBytes)
        problems.push({
          pointer,
          detail: `photo is ${m.byteSize} bytes; Facebook photos may be at most ${limits.maxImageBytes}`,
        });
    } else if (isFacebookVideo(m.contentType)) {
      if (media.length > 1)
        problems.push({
          pointer,
          detail: "a video is published as a reel, alone: post the photos and the video separately",
        });
      if (m.byteSize > FACEBOOK_MAX_VIDEO_BYTES)
        problems.push({
          pointer,
          detail: `video is ${m.byteSize} bytes; Herald uploads reels of at most ${FACEBOOK_MAX_VIDEO_BYTES}`,
        });
      const seconds = m.durationSec ?? null;
      if (seconds !== null && (seconds < FACEBOOK_REEL_SECONDS.min || seconds > FACEBOOK_REEL_SECONDS.max))
        problems.push({
          pointer,
          detail:
            `video lasts ${seconds} s; a Facebook reel lasts ${FACEBOOK_REEL_SECONDS.min} to ` +
            `${FACEBOOK_REEL_SECONDS.max} s`,
        });
    } else {
      problems.push({
        pointer,
        detail: `${m.contentType} cannot be posted on Facebook (JPEG or PNG photos, an MP4 or MOV video)`,
      });
    }
  });
  return problems;
}
