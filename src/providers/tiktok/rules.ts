// What Herald enforces for TikTok before anything is sent: a post is one video or 1–35 photos (never
// text alone, never mixed), TikTok's types and sizes, caption lengths in UTF-16 units as TikTok
// counts them, photos only when TikTok can pull them from Herald's public URL, and
// `destination_options.tiktok` (a privacy level is required: TikTok forbids choosing one for the user).
import { Type } from "@sinclair/typebox";
import type { ChannelLimits, CheckItemInput, ItemProblem, MediaFacts, NetworkRules } from "../types.ts";

/** Who can see a post, as the API spells it (the creator may be offered fewer: creator_info says). */
export const TIKTOK_PRIVACY_LEVELS = [
  "PUBLIC_TO_EVERYONE",
  "MUTUAL_FOLLOW_FRIENDS",
  "FOLLOWER_OF_CREATOR",
  "SELF_ONLY",
] as const;

/** One of TikTok's privacy levels. */
export type TikTokPrivacyLevel = (typeof TIKTOK_PRIVACY_LEVELS)[number];

/** A video's caption (`title`), in UTF-16 code units. */
export const TIKTOK_VIDEO_CAPTION_MAX = 2200;
/** A photo post's `title` (Herald sends the post's headline, cut to this). */
export const TIKTOK_PHOTO_TITLE_MAX = 90;
/** A photo post's `description` (the item's text). */
export const TIKTOK_PHOTO_DESCRIPTION_MAX = 4000;
/** Photos in one photo post. */
export const TIKTOK_MAX_PHOTOS = 35;
/** Largest photo, bytes ("20 MB", read as 10^6 bytes a MB: the stricter reading). */
export const TIKTOK_MAX_PHOTO_BYTES = 20_000_000;
/** Largest video, bytes ("4 GB", read the stricter way). */
export const TIKTOK_MAX_VIDEO_BYTES = 4_000_000_000;
/** Photo types TikTok takes (PNG is refused by photo posts per several integrators: Herald refuses it). */
export const TIKTOK_PHOTO_TYPES = ["image/jpeg", "image/webp"];
/** Video types TikTok takes (MP4 recommended). */
export const TIKTOK_VIDEO_TYPES = ["video/mp4", "video/quicktime", "video/webm"];

/** TikTok's limits: a 2,200-unit caption, one video or up to 35 photos of up to 20 MB. */
export const TIKTOK_LIMITS: ChannelLimits = {
  maxCharacters: TIKTOK_VIDEO_CAPTION_MAX,
  maxImages: TIKTOK_MAX_PHOTOS,
  maxVideos: 1,
  maxImageBytes: TIKTOK_MAX_PHOTO_BYTES,
};

/** `destination_options.tiktok`, as the options schema lets it through. */
export interface TikTokOptions {
  privacy_level?: TikTokPrivacyLevel;
  disable_comment?: boolean;
  disable_duet?: boolean;
  disable_stitch?: boolean;
  brand_content_toggle?: boolean;
  brand_organic_toggle?: boolean;
  is_aigc?: boolean;
  video_cover_timestamp_ms?: number;
}

/** Options that only mean something for a video (a photo post has no duets, stitches or cover frame). */
const VIDEO_ONLY_OPTIONS = ["disable_duet", "disable_stitch", "video_cover_timestamp_ms", "is_aigc"] as const;

/** What a body item posts as on TikTok: one video, or photos. */
export type TikTokPostKind = "video" | "photo";

/** The kind of post an item's media make; null when there is none or they are mixed. */
export function tiktokPostKind(media: Pick<MediaFacts, "contentType">[]): TikTokPostKind | null {
  if (media.length === 0) return null;
  if (media.every((m) => isVideo(m.contentType))) return "video";
  if (media.every((m) => !isVideo(m.contentType))) return "photo";
  return null;
}

function isVideo(contentType: string): boolean {
  return contentType.startsWith("video/");
}

function typeOf(contentType: string): string {
  return contentType.split(";")[0]!.trim().toLowerCase();
}

/** TikTok's rules: `destination_options.tiktok`, no threads, no documented daily number. */
export const TIKTOK_RULES: NetworkRules = {
  channel: "tiktok",
  displayName: "TikTok",
  defaultLimits: TIKTOK_LIMITS,
  optionsSchema: Type.Object(
    {
      privacy_level: Type.Optional(
        Type.Union(
          TIKTOK_PRIVACY_LEVELS.map((level) => Type.Literal(level)),
          { title: "Who can see it" },
        ),
      ),
      disable_comment: Type.Optional(Type.Boolean({ title: "Turn off comments", default: false })),
      disable_duet: Type.Optional(Type.Boolean({ title: "Turn off duets", default: false })),
      disable_stitch: Type.Optional(Type.Boolean({ title: "Turn off stitches", default: false })),
      brand_content_toggle: Type.Optional(
        Type.Boolean({ title: "Branded content (paid partnership)", default: false }),
      ),
      brand_organic_toggle: Type.Optional(Type.Boolean({ title: "Promotes your own brand", default: false })),
      is_aigc: Type.Optional(Type.Boolean({ title: "Made with AI", default: false })),
      video_cover_timestamp_ms: Type.Optional(
        Type.Integer({ minimum: 0, title: "Cover frame (milliseconds into the video)" }),
      ),
    },
    { additionalProperties: false, description: "TikTok requires choosing who can see the post." },
  ),
  checkOptions: ({ options }) => checkTikTokOptions(options),
  checkItem: (input) => checkTikTokItem(input),
  // A photo post's description is longer than a video's caption (UTF-16 units, as TikTok counts).
  measureText: ({ text, media }) => [
    {
      used: text.length,
      limit: tiktokPostKind(media) === "photo" ? TIKTOK_PHOTO_DESCRIPTION_MAX : TIKTOK_VIDEO_CAPTION_MAX,
      unit: "characters",
    },
  ],
  supportsThreads: false,
  // TikTok treats reposted videos as unoriginal content and limits their reach.
  refusesRepeats: true,
  // TikTok caps API posts per creator per day without publishing the number; its refusal
  // (spam_risk_too_many_posts) is retried a day later instead.
  dailyCap: null,
  monthlyPostLimit: null,
};

/** Option rules that hold for drafts too: branded content cannot be private (TikTok's rule). */
export function checkTikTokOptions(options: Record<string, unknown>): ItemProblem[] {
  if (options.brand_content_toggle === true && options.privacy_level === "SELF_ONLY")
    return [
      {
        pointer: "/privacy_level",
        detail:
          "branded content (brand_content_toggle) cannot be private on TikTok: choose another privacy level",
      },
    ];
  return [];
}

/**
 * TikTok's rules for one body item: media required (one MP4/MOV/WebM video up to 4 GB, or 1–35
 * JPEG/WebP photos up to 20 MB that TikTok pulls from Herald's public URL); a video caption up to
 * 2,200 UTF-16 units, a photo description up to 4,000; a privacy level; video-only options refused
 * on photos and a cover frame inside the video.
 */
export function checkTikTokItem(input: CheckItemInput): ItemProblem[] {
  const { text, media } = input;
  const options = input.options as TikTokOptions;
  // Option problems point into destination_options.tiktok, not at the item.
  const problems: ItemProblem[] = checkTikTokOptions(input.options).map((p) => ({ ...p, option: p.pointer }));
  if (options.privacy_level === undefined)
    problems.push({
      pointer: "",
      option: "/privacy_level",
      detail:
        `TikTok requires choosing who can see the post: set ` +
        `destination_options.tiktok.privacy_level (${TIKTOK_PRIVACY_LEVELS.join(", ")})`,
    });
  const kind = tiktokPostKind(media);
  if (media.length === 0) {
    problems.push({ pointer: "", detail: "TikTok posts a video or photos: text alone cannot be posted" });
    return problems;
  }
  if (kind === null) {
    problems.push({ pointer: "/media", detail: "a TikTok post is one video or photos, never both" });
    return problems;
  }
  if (kind === "video") {
    if (text.length > TIKTOK_VIDEO_CAPTION_MAX)
      problems.push({
        pointer: "",
        detail: `the caption is ${text.length} UTF-16 units; TikTok allows ${TIKTOK_VIDEO_CAPTION_MAX}`,
      });
    media.forEach((m, i) => problems.push(...videoProblems(m, i, options)));
    return problems;
  }
  if (text.length > TIKTOK_PHOTO_DESCRIPTION_MAX)
    problems.push({
      pointer: "",
      detail: `a photo post's description is ${text.length} UTF-16 units; TikTok allows ${TIKTOK_PHOTO_DESCRIPTION_MAX}`,
    });
  const videoOnly = VIDEO_ONLY_OPTIONS.filter((name) => options[name] !== undefined);
  if (videoOnly.length > 0)
    problems.push({
      pointer: "/media/0",
      detail: `${videoOnly.join(", ")} apply to TikTok videos only; remove them from destination_options.tiktok for photos`,
    });
  media.forEach((m, i) => problems.push(...photoProblems(m, i, input.publicMediaUrls)));
  return problems;
}

function videoProblems(m: MediaFacts, index: number, options: TikTokOptions): ItemProblem[] {
  const pointer = `/media/${index}`;
  if (index > 0) return [{ pointer, detail: "a TikTok post takes one video" }];
  const problems: ItemProblem[] = [];
  if (!TIKTOK_VIDEO_TYPES.includes(typeOf(m.contentType)))
    problems.push({ pointer, detail: `TikTok takes MP4, MOV and WebM videos, not ${m.contentType}` });
  if (m.byteSize > TIKTOK_MAX_VIDEO_BYTES)
    problems.push({
      pointer,
      detail: `video is ${m.byteSize} bytes; TikTok takes at most ${TIKTOK_MAX_VIDEO_BYTES}`,
    });
  const cover = options.video_cover_timestamp_ms;
  if (
    cover !== undefined &&
    typeof m.durationSec === "number" &&
    m.durationSec > 0 &&
    cover > m.durationSec * 1000
  )
    problems.push({
      pointer,
      detail: `video_cover_timestamp_ms ${cover} is past the end of the ${m.durationSec}-second video`,
    });
  return problems;
}

function photoProblems(m: MediaFacts, index: number, publicMediaUrls: boolean): ItemProblem[] {
  const pointer = `/media/${index}`;
  const problems: ItemProblem[] = [];
  if (index >= TIKTOK_MAX_PHOTOS)
    problems.push({ pointer, detail: `a TikTok photo post takes at most ${TIKTOK_MAX_PHOTOS} photos` });
  if (!TIKTOK_PHOTO_TYPES.includes(typeOf(m.contentType)))
    problems.push({ pointer, detail: `TikTok photo posts take JPEG and WebP images, not ${m.contentType}` });
  if (m.byteSize > TIKTOK_MAX_PHOTO_BYTES)
    problems.push({
      pointer,
      detail: `photo is ${m.byteSize} bytes; TikTok takes at most ${TIKTOK_MAX_PHOTO_BYTES}`,
    });
  if (!publicMediaUrls)
    problems.push({
      pointer,
      detail: "TikTok pulls photos from Herald's public URL; HERALD_BASE_URL must be a public https origin",
    });
  return problems;
}
