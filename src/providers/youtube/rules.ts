// What Herald knows of YouTube without talking to it (providers.md §9.3): `destination_options.youtube`,
// the rules a post is checked against before anything is sent (one video, a title, a description
// without < or >), and how the title and description are made from the post.
import { Type } from "@sinclair/typebox";
import { commentLengthProblems, firstCommentOption } from "../options.ts";
import { utf8Length } from "../text.ts";
import type { ChannelLimits, ItemProblem, MediaFacts, NetworkRules } from "../types.ts";

/** Longest title YouTube takes, characters (Herald counts UTF-16 units, the stricter way). */
export const YOUTUBE_MAX_TITLE = 100;
/** Longest description YouTube takes: 5,000, read as UTF-8 bytes (the stricter reading). */
export const YOUTUBE_MAX_DESCRIPTION_BYTES = 5000;
/** All tags together, as YouTube counts them (commas between tags, quotes around tags with spaces). */
export const YOUTUBE_MAX_TAGS_LENGTH = 500;
/** Largest file `videos.insert` takes: 256 GB. */
export const YOUTUBE_MAX_VIDEO_BYTES = 256 * 1024 ** 3;
/** Longest video YouTube takes from a verified channel: 12 hours (unverified ones: 15 minutes). */
export const YOUTUBE_MAX_DURATION_SEC = 12 * 60 * 60;

/**
 * A first comment on YouTube (`commentThreads.insert`, developers.google.com/youtube/v3/docs/
 * commentThreads/insert: `snippet.topLevelComment.snippet.textOriginal`, scope youtube.force-ssl,
 * 50 quota units): the API answers `commentTextTooLong` past 10,000 characters (the figure YouTube's
 * comment box enforces; the reference names the error, not the number).
 */
export const YOUTUBE_COMMENT_MAX = 10_000;

/**
 * A YouTube destination's limits: the description's 5,000 bytes and one video, no images. The
 * video size is checked against YOUTUBE_MAX_VIDEO_BYTES.
 */
export const YOUTUBE_LIMITS: ChannelLimits = {
  maxCharacters: YOUTUBE_MAX_DESCRIPTION_BYTES,
  maxImages: 0,
  maxVideos: 1,
  maxImageBytes: 0,
};

/** Characters YouTube refuses in titles, descriptions and tags. */
const ANGLE_BRACKETS = /[<>]/;

/** YouTube's rules: `destination_options.youtube`, no threads, 100 uploads a day (see DAILY_CAP). */
export const YOUTUBE_RULES: NetworkRules = {
  channel: "youtube",
  displayName: "YouTube",
  defaultLimits: YOUTUBE_LIMITS,
  optionsSchema: Type.Object(
    {
      privacy_status: Type.Optional(
        Type.Union(
          [
            Type.Literal("public", { title: "Public" }),
            Type.Literal("unlisted", { title: "Unlisted" }),
            Type.Literal("private", { title: "Private" }),
          ],
          { title: "Privacy" },
        ),
      ),
      made_for_kids: Type.Optional(Type.Boolean({ title: "Made for kids" })),
      category_id: Type.Optional(
        Type.String({
          pattern: "^[0-9]{1,4}$",
          title: "Category id",
          description: "A number, such as 22 (People & Blogs).",
        }),
      ),
      tags: Type.Optional(
        Type.Array(Type.String({ minLength: 1, maxLength: 500 }), {
          maxItems: 500,
          title: "Tags",
          description: "Comma-separated.",
        }),
      ),
      notify_subscribers: Type.Optional(Type.Boolean({ title: "Notify subscribers" })),
      first_comment: firstCommentOption(`Up to ${YOUTUBE_COMMENT_MAX} characters.`),
    },
    {
      additionalProperties: false,
      description: "The video's title is the first line of item 1; the whole text is its description.",
    },
  ),
  checkOptions: ({ options }) => checkYouTubeOptions(options),
  checkItem: (input) => checkYouTubeItem(input),
  measureText: ({ text }) => [
    { used: utf8Length(text), limit: YOUTUBE_MAX_DESCRIPTION_BYTES, unit: "bytes" },
  ],
  checkFirstComment: (text) => commentLengthProblems(text, YOUTUBE_COMMENT_MAX, "YouTube"),
  supportsThreads: false,
  // YouTube treats re-uploaded videos as repetitive content.
  refusesRepeats: true,
  // videos.insert has its own bucket of 100 calls a day per Google Cloud project (one unit each):
  // no destination can upload more, whatever YouTube allows its channel.
  dailyCap: 100,
  monthlyPostLimit: null,
};

/** Whether a media item is a video (YouTube takes any video type; Herald's assets are MP4 or MOV). */
export function isVideo(media: { contentType: string }): boolean {
  return media.contentType.toLowerCase().startsWith("video/");
}

/**
 * The video's title: the post's headline (its first line, ≤ 100 characters), else the text's first
 * non-empty line, cut to 100 UTF-16 units without splitting a character.
 */
export function titleOf(input: { headline: string; text: string }): string {
  const firstLine = input.text.split("\n").find((line) => line.trim() !== "") ?? "";
  const title = (input.headline.trim() || firstLine.trim()).replace(/[\uD800-\uDBFF]$/, "");
  let cut = "";
  for (const char of title) {
    if (cut.length + char.length > YOUTUBE_MAX_TITLE) break;
    cut += char;
  }
  return cut.trim();
}

/**
 * YouTube's rules for one post: exactly one video (no text-only posts, no images), a first line to
 * be the title, a description (the whole text) of at most 5,000 UTF-8 bytes, no `<` or `>`.
 */
export function checkYouTubeItem(input: { text: string; media: MediaFacts[] }): ItemProblem[] {
  const { text, media } = input;
  const problems: ItemProblem[] = [];
  if (text.trim() === "")
    problems.push({
      pointer: "",
      detail: "YouTube needs a title: the first line of the text becomes the video's title",
    });
  if (ANGLE_BRACKETS.test(text))
    problems.push({
      pointer: "",
      detail: "YouTube refuses < and > in titles and descriptions; remove them from the text",
    });
  const bytes = utf8Length(text);
  if (bytes > YOUTUBE_MAX_DESCRIPTION_BYTES)
    problems.push({
      pointer: "",
      detail: `text is ${bytes} bytes in UTF-8; a YouTube description takes at most ${YOUTUBE_MAX_DESCRIPTION_BYTES}`,
    });
  if (media.length === 0)
    problems.push({ pointer: "", detail: "YouTube publishes videos only: attach one video to this item" });
  let videos = 0;
  media.forEach((m, i) => {
    const pointer = `/media/${i}`;
    if (!isVideo(m))
      return void problems.push({
        pointer,
        detail: `YouTube publishes one video and nothing else; ${m.contentType} cannot be attached`,
      });
    if (videos++ > 0)
      return void problems.push({ pointer, detail: "a YouTube post takes exactly one video" });
    if (m.byteSize > YOUTUBE_MAX_VIDEO_BYTES)
      problems.push({ pointer, detail: `video is ${m.byteSize} bytes; YouTube takes at most 256 GB` });
    if (typeof m.durationSec === "number" && m.durationSec > YOUTUBE_MAX_DURATION_SEC)
      problems.push({ pointer, detail: `video is ${m.durationSec} s long; YouTube takes at most 12 hours` });
  });
  return problems;
}

/**
 * Checks `destination_options.youtube` beyond its schema: tags without `<`, `>` or commas, and all
 * tags together within 500 characters as YouTube counts them.
 */
export function checkYouTubeOptions(options: Record<string, unknown>): ItemProblem[] {
  const tags = Array.isArray(options.tags) ? options.tags.filter((t) => typeof t === "string") : [];
  const problems: ItemProblem[] = [];
  tags.forEach((tag, i) => {
    if (/[<>,]/.test(tag))
      problems.push({ pointer: `/tags/${i}`, detail: "a YouTube tag cannot contain <, > or a comma" });
  });
  const length = tagsLength(tags);
  if (length > YOUTUBE_MAX_TAGS_LENGTH)
    problems.push({
      pointer: "/tags",
      detail:
        `tags are ${length} characters as YouTube counts them (commas between tags, quotes around ` +
        `tags with spaces); YouTube allows ${YOUTUBE_MAX_TAGS_LENGTH}`,
    });
  return problems;
}

/** The length of a tag list as YouTube counts it: a comma between tags, quotes around a tag with a space. */
export function tagsLength(tags: string[]): number {
  const each = tags.map((t) => t.length + (t.includes(" ") ? 2 : 0));
  return each.reduce((a, b) => a + b, 0) + Math.max(0, tags.length - 1);
}
