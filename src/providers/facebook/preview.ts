// How a Facebook Page post Herald sends will look: the Page's name, time · Public; the message with
// links and hashtags as entities (Herald sends no tags, so @names stay text), folded after ~480
// characters behind "See more"; photos in a grid of up to four ("+N" for the rest); a card for the
// `link` option or the first link of a post without media, drawn by Facebook from the page's own tags.
import type { PreviewInput } from "../../http/previews/index.ts";
import {
  authorLine,
  findLinks,
  findTags,
  html,
  linkCard,
  mediaGrid,
  note,
  ordered,
  postText,
  previewSection,
  whenText,
  extraItems,
} from "../../http/previews/kit.ts";

/** Where Facebook's desktop feed folds a post (third-party measure). */
const FACEBOOK_FOLD_CHARS = 480;

export function facebookPreview(input: PreviewInput) {
  const item = input.items[0] ?? { body: "", media: [] };
  const links = findLinks(item.body);
  const shared = typeof input.options.link === "string" ? input.options.link : (links[0]?.href ?? null);
  const card = item.media.length === 0 && shared ? linkCard(shared, "Facebook") : null;
  const post = html`${authorLine({ author: input.author, at: whenText(input.at), extra: "Public", shape: "round" })}
${postText(item.body, ordered(links, findTags(item.body)), { chars: FACEBOOK_FOLD_CHARS, more: "See more" })}
${mediaGrid(item.media, { kind: "grid", altBadge: false })}${card}`;
  return previewSection({
    network: "Facebook",
    slug: "facebook",
    posts: [post],
    notes: [extraItems(input, "Facebook")],
  });
}
