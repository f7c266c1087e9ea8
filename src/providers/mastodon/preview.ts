// How a Mastodon status Herald sends will look (public, no content warning: Herald sends neither a
// spoiler text nor a sensitive flag): display name, @username, time; links without scheme or "www."
// and cut at 30 characters with "…", mentions and hashtags as entities; up to four media in the web
// UI's grid with "ALT" badges; a card for the first link when there is no media (the server fetches it);
// very long statuses fold behind "Read more". Thread items in order.
import type { PreviewInput } from "../../http/previews/index.ts";
import {
  atHandle,
  authorLine,
  findLinks,
  findMentions,
  findTags,
  html,
  linkCard,
  mediaGrid,
  ordered,
  postText,
  previewSection,
  shortenedLink,
  whenText,
} from "../../http/previews/kit.ts";

/** Characters of a link the web UI shows before "…" (text_formatter's shortened_link). */
const MASTODON_LINK_KEEP = 30;
/** The web UI collapses statuses taller than ~706 px, about this many lines. */
const MASTODON_FOLD_LINES = 32;

export function mastodonPreview(input: PreviewInput) {
  const posts = input.items.map((item) => {
    const links = findLinks(item.body).map((l) => ({
      ...l,
      display: shortenedLink(l.href!, MASTODON_LINK_KEEP),
    }));
    const entities = ordered(links, findMentions(item.body, { remote: true }), findTags(item.body));
    const card = item.media.length === 0 && links[0] ? linkCard(links[0].href!, "Mastodon") : null;
    return html`${authorLine({ author: input.author, handle: atHandle(input.author.handle), at: whenText(input.at) })}
${postText(item.body, entities, { lines: MASTODON_FOLD_LINES, more: "Read more" })}
${mediaGrid(item.media, { kind: "grid", altBadge: true })}${card}`;
  });
  return previewSection({ network: "Mastodon", slug: "mastodon", posts });
}
