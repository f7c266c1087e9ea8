// How a TikTok post Herald sends will look: a 9:16 video with @username and the caption over its foot,
// cut after two lines behind "more"; or a photo post (photos to swipe, its title and description).
// Hashtags and mentions are entities; links are never clickable. Who can see it, and what Herald turns
// off (comments, duets and stitches unless the options say otherwise), as notes.
import type { PreviewInput } from "../../http/previews/index.ts";
import {
  atHandle,
  findMentions,
  findTags,
  html,
  mediaGrid,
  note,
  ordered,
  postText,
  previewSection,
  authorLine,
  extraItems,
} from "../../http/previews/kit.ts";
import { TIKTOK_PHOTO_TITLE_MAX } from "./rules.ts";

const PRIVACY: Record<string, string> = {
  PUBLIC_TO_EVERYONE: "Everyone",
  MUTUAL_FOLLOW_FRIENDS: "Friends",
  FOLLOWER_OF_CREATOR: "Followers",
  SELF_ONLY: "Only you",
};

export function tiktokPreview(input: PreviewInput) {
  const item = input.items[0] ?? { body: "", media: [] };
  const photo = item.media.length > 0 && item.media.every((m) => m.kind !== "video");
  const entities = ordered(findMentions(item.body, { dots: true }), findTags(item.body));
  const who = authorLine({
    author: { ...input.author, name: atHandle(input.author.handle) ?? input.author.name },
  });
  const caption = postText(item.body, entities, { lines: 2, chars: 100, more: "more" });
  const title = photo
    ? cutUtf16((item.body.split("\n")[0] ?? "").trim().slice(0, 100), TIKTOK_PHOTO_TITLE_MAX)
    : "";
  const post = photo
    ? html`${who}${mediaGrid(item.media, { kind: "strip", altBadge: false, frame: "tall" })}
${title ? html`<p class="pv-title">${title}</p>` : null}${caption}`
    : html`${who}<div class="pv-overlay">${mediaGrid(item.media, { kind: "grid", altBadge: false, frame: "tall" })}
${caption}</div>`;
  const privacy = PRIVACY[String(input.options.privacy_level)];
  const off = [
    input.options.disable_comment !== false ? "comments" : null,
    !photo && input.options.disable_duet !== false ? "duets" : null,
    !photo && input.options.disable_stitch !== false ? "stitches" : null,
  ].filter((x): x is string => x !== null);
  return previewSection({
    network: "TikTok",
    slug: "tiktok",
    posts: [post],
    notes: [
      note(privacy ? `Who can see it: ${privacy}.` : "Who can see it: not chosen yet (TikTok requires it)."),
      off.length > 0 ? note(`Turned off: ${off.join(", ")}.`) : null,
      extraItems(input, "TikTok"),
    ],
  });
}

/** The longest start of `text` of at most `max` UTF-16 units, never half a surrogate pair (as sent). */
function cutUtf16(text: string, max: number): string {
  let out = "";
  for (const char of text) {
    if (out.length + char.length > max) break;
    out += char;
  }
  return out;
}
