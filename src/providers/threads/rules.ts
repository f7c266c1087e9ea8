// What Herald enforces for Threads before anything is sent: text length as Threads counts it, media
// types, sizes and counts, media only when Meta can download it from Herald, and the options.
import { Type } from "@sinclair/typebox";
import { unattachedAltTextProblems, utf8Length } from "../text.ts";
import type { ChannelLimits, CheckItemInput, ItemProblem, NetworkRules } from "../types.ts";

/**
 * Threads' limits: 500 characters; a post takes one image or video, or a carousel of 2–20; images
 * up to 8 MB (held to 8,000,000 bytes: the stricter reading of "8 MB").
 */
export const THREADS_LIMITS: ChannelLimits = {
  maxCharacters: 500,
  maxImages: 20,
  maxVideos: 20,
  maxImageBytes: 8_000_000,
};

/** Largest video Threads takes, in bytes ("1 GB", read as 10^9). */
export const THREADS_MAX_VIDEO_BYTES = 1_000_000_000;

/** Most media in one post (a carousel); a carousel needs at least two. */
export const THREADS_MAX_MEDIA = 20;

/** Longest alt text Herald sends with an image or video. */
export const THREADS_ALT_TEXT_MAX = 1000;

/** Image types Threads documents (no GIF or WebP). */
export const THREADS_IMAGE_TYPES = ["image/jpeg", "image/png"];
/** Video types Threads documents (MP4 and MOV). */
export const THREADS_VIDEO_TYPES = ["video/mp4", "video/quicktime"];

/** Who may reply to a post (`reply_control`), as the API spells it. */
export const THREADS_REPLY_CONTROLS = ["everyone", "accounts_you_follow", "mentioned_only"] as const;

/** Threads' rules: `destination_options.threads`, text and media limits, the 250-posts-a-day cap. */
export const THREADS_RULES: NetworkRules = {
  channel: "threads",
  displayName: "Threads",
  defaultLimits: THREADS_LIMITS,
  optionsSchema: Type.Object(
    {
      alt_text_by_asset_id: Type.Optional(
        Type.Record(Type.String(), Type.String({ maxLength: THREADS_ALT_TEXT_MAX })),
      ),
      reply_control: Type.Optional(
        Type.Union(
          THREADS_REPLY_CONTROLS.map((value) => Type.Literal(value)),
          { title: "Who can reply" },
        ),
      ),
    },
    { additionalProperties: false },
  ),
  checkOptions: ({ options, assetIds }) => unattachedAltTextProblems(options, assetIds),
  checkItem: (input) => checkThreadsItem(input),
  measureText: ({ text, limits }) => [
    { used: threadsLength(text), limit: limits.maxCharacters, unit: "characters" },
  ],
  supportsThreads: true,
  // 250 API-published posts per profile in a rolling 24 h (a carousel counts once).
  dailyCap: 250,
  monthlyPostLimit: null,
};

// Made on first use, like text.ts's segmenter: ICU's segmentation data is loaded only when text is counted.
let segmenter: Intl.Segmenter | null = null;
const EMOJI = /\p{Extended_Pictographic}|\p{Regional_Indicator}|\u20e3/u;

/**
 * Text length as Threads counts it: one per user-perceived character, except that an emoji counts
 * as its UTF-8 bytes ("👍" is 4, "👍🏽" is 8), as Meta's posting guide says.
 */
export function threadsLength(text: string): number {
  segmenter ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
  let length = 0;
  for (const { segment } of segmenter.segment(text)) length += EMOJI.test(segment) ? utf8Length(segment) : 1;
  return length;
}

/**
 * Threads' rules for one body item: ≤500 characters (emojis by their bytes); up to 20 media
 * (JPEG/PNG ≤ 8 MB, MP4/MOV ≤ 1 GB); media only when Meta can fetch it from Herald's public URL.
 */
export function checkThreadsItem(input: CheckItemInput): ItemProblem[] {
  const { text, media, limits } = input;
  const problems: ItemProblem[] = [];
  const length = threadsLength(text);
  if (length > limits.maxCharacters)
    problems.push({
      pointer: "",
      detail: `text is ${length} characters; Threads allows ${limits.maxCharacters} (each emoji counts as its UTF-8 bytes)`,
    });
  media.forEach((m, i) => {
    const pointer = `/media/${i}`;
    if (!input.publicMediaUrls)
      problems.push({
        pointer,
        detail:
          "Threads downloads media from Herald's public URL; HERALD_BASE_URL must be a public https origin",
      });
    if (i >= THREADS_MAX_MEDIA)
      problems.push({
        pointer,
        detail: `a Threads post takes at most ${THREADS_MAX_MEDIA} images and videos`,
      });
    if (THREADS_IMAGE_TYPES.includes(m.contentType)) {
      if (m.byteSize > limits.maxImageBytes)
        problems.push({
          pointer,
          detail: `image is ${m.byteSize} bytes; Threads images may be at most ${limits.maxImageBytes}`,
        });
    } else if (THREADS_VIDEO_TYPES.includes(m.contentType)) {
      if (m.byteSize > THREADS_MAX_VIDEO_BYTES)
        problems.push({
          pointer,
          detail: `video is ${m.byteSize} bytes; Threads videos may be at most ${THREADS_MAX_VIDEO_BYTES}`,
        });
    } else {
      problems.push({
        pointer,
        detail: `${m.contentType} cannot be posted on Threads (JPEG or PNG images, MP4 or MOV videos)`,
      });
    }
  });
  return problems;
}
