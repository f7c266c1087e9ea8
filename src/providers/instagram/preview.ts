// How an Instagram post Herald sends will look: avatar and username above the media (one image or
// video, or a carousel to swipe), then the caption led by the username, folded after ~125 characters or
// two lines behind "more". Mentions and hashtags are entities; links in captions are not clickable.
import type { PreviewInput } from "../../http/previews/index.ts";
import {
  authorLine,
  findMentions,
  findTags,
  html,
  mediaGrid,
  ordered,
  postText,
  previewSection,
  whenText,
  extraItems,
} from "../../http/previews/kit.ts";

/** Instagram shows captions up to ~125 characters whole (its help centre's advice). */
const INSTAGRAM_FOLD_CHARS = 125;

export function instagramPreview(input: PreviewInput) {
  const item = input.items[0] ?? { body: "", media: [] };
  const username = input.author.handle?.replace(/^@/, "") ?? input.author.name;
  const entities = ordered(findMentions(item.body, { dots: true }), findTags(item.body));
  const lead = html`<span class="pv-name">${username}</span> `;
  const post = html`${authorLine({ author: { ...input.author, name: username }, at: whenText(input.at) })}
${mediaGrid(item.media, { kind: "strip", altBadge: false, frame: "portrait" })}
${postText(item.body, entities, { chars: INSTAGRAM_FOLD_CHARS, lines: 2, more: "more" }, lead)}`;
  return previewSection({
    network: "Instagram",
    slug: "instagram",
    posts: [post],
    notes: [extraItems(input, "Instagram")],
  });
}
