// LinkedIn's rules without the network: options, limits, and what one post may hold.
import { Type } from "@sinclair/typebox";
import { escapeLittleText } from "./api.ts";
import { commentLengthProblems, firstCommentOption } from "../options.ts";
import { isVideo } from "./media.ts";
import type { ChannelLimits, ItemProblem, MediaFacts, NetworkRules } from "../types.ts";

/**
 * LinkedIn's limits: 3,000 characters of commentary, 2–20 images in a multi-image post or one video.
 * Images are held to 5 MB (LinkedIn documents pixels, not bytes; third-party guides say 5 MB).
 */
export const LINKEDIN_LIMITS: ChannelLimits = {
  maxCharacters: 3000,
  maxImages: 20,
  maxVideos: 1,
  maxImageBytes: 5 * 1024 * 1024,
};

/** The smallest video LinkedIn takes: 75 KB, read as 75 × 1024 (the stricter way). */
export const LINKEDIN_VIDEO_MIN_BYTES = 75 * 1024;
/** The largest video LinkedIn takes: 500 MB, read as 500,000,000 bytes (the stricter way). */
export const LINKEDIN_VIDEO_MAX_BYTES = 500_000_000;

/**
 * A first comment on LinkedIn (`POST /rest/socialActions/{post-urn}/comments` with `{actor, object,
 * message: {text}}`, learn.microsoft.com/linkedin/marketing/community-management/shares/comments-api;
 * w_member_social / w_organization_social, which Herald asks for already): 1,250 characters, the
 * limit LinkedIn's comment box enforces and API tools document (LinkedIn's reference gives none).
 */
export const LINKEDIN_COMMENT_MAX = 1250;

/** Image types the Images API takes. */
const IMAGE_TYPES = ["image/jpeg", "image/png", "image/gif"];

/**
 * LinkedIn's rules: `destination_options.linkedin` (visibility, resharing), no threads, no documented cap.
 */
export const LINKEDIN_RULES: NetworkRules = {
  channel: "linkedin",
  displayName: "LinkedIn",
  defaultLimits: LINKEDIN_LIMITS,
  optionsSchema: Type.Object(
    {
      visibility: Type.Optional(
        Type.Union(
          [
            Type.Literal("public", { title: "Anyone" }),
            Type.Literal("connections", { title: "Connections only" }),
          ],
          { title: "Visibility" },
        ),
      ),
      allow_resharing: Type.Optional(Type.Boolean({ title: "Allow resharing" })),
      first_comment: firstCommentOption(`Up to ${LINKEDIN_COMMENT_MAX} characters.`),
    },
    { additionalProperties: false },
  ),
  checkItem: (input) => checkLinkedInItem(input),
  measureText: ({ text, limits }) => [
    { used: escapeLittleText(text).length, limit: limits.maxCharacters, unit: "characters" },
  ],
  checkFirstComment: (text) => commentLengthProblems(text, LINKEDIN_COMMENT_MAX, "LinkedIn"),
  supportsThreads: false,
  dailyCap: null,
  monthlyPostLimit: null,
};

/** Account ids of LinkedIn pages (organizations); a member is `urn:li:person:…`. */
export const LINKEDIN_PAGE_PREFIX = "urn:li:organization:";

/**
 * LinkedIn's rules for one post: commentary of at most `maxCharacters` UTF-16 units as sent (each
 * reserved character escaped, so counted twice); one MP4 video alone, or up to `maxImages` JPEG, PNG
 * or GIF images of at most `maxImageBytes`; `visibility: connections` only for a member (a page has
 * no connections).
 */
export function checkLinkedInItem(input: {
  text: string;
  media: MediaFacts[];
  limits: ChannelLimits;
  options: Record<string, unknown>;
  externalId: string;
}): ItemProblem[] {
  const { text, media, limits } = input;
  const problems: ItemProblem[] = [];
  if (input.options.visibility === "connections" && input.externalId.startsWith(LINKEDIN_PAGE_PREFIX))
    problems.push({
      pointer: "",
      option: "/visibility",
      detail:
        "a LinkedIn page has no connections: its posts are public (remove visibility or set it to public)",
    });
  const length = escapeLittleText(text).length;
  if (length > limits.maxCharacters)
    problems.push({
      pointer: "",
      detail:
        `text is ${length} characters as LinkedIn counts it; LinkedIn allows ` +
        `${limits.maxCharacters} (UTF-16 units, and each of \\ | { } @ [ ] ( ) < > # * _ ~ counts twice once escaped)`,
    });
  const videos = media.filter(isVideo).length;
  if (videos > limits.maxVideos)
    problems.push({ pointer: "/media", detail: `a LinkedIn post takes at most ${limits.maxVideos} video` });
  else if (videos > 0 && media.length > videos)
    problems.push({ pointer: "/media", detail: "a LinkedIn video goes alone, without images" });
  let images = 0;
  media.forEach((m, i) => {
    const pointer = `/media/${i}`;
    if (isVideo(m)) {
      if (m.contentType !== "video/mp4")
        problems.push({ pointer, detail: `LinkedIn videos must be MP4 (video/mp4), not ${m.contentType}` });
      if (m.byteSize < LINKEDIN_VIDEO_MIN_BYTES || m.byteSize > LINKEDIN_VIDEO_MAX_BYTES)
        problems.push({
          pointer,
          detail: `video is ${m.byteSize} bytes; LinkedIn takes ${LINKEDIN_VIDEO_MIN_BYTES} to ${LINKEDIN_VIDEO_MAX_BYTES}`,
        });
      return;
    }
    if (!IMAGE_TYPES.includes(m.contentType))
      return void problems.push({
        pointer,
        detail: `${m.contentType} cannot be posted on LinkedIn (JPEG, PNG or GIF)`,
      });
    if (images++ === limits.maxImages)
      problems.push({ pointer, detail: `a LinkedIn post takes at most ${limits.maxImages} images` });
    if (m.byteSize > limits.maxImageBytes)
      problems.push({
        pointer,
        detail: `image is ${m.byteSize} bytes; Herald sends LinkedIn images of at most ${limits.maxImageBytes}`,
      });
  });
  return problems;
}
