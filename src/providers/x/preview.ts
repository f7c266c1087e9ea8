// How an X post Herald sends will look: name, @username and time; mentions, hashtags and cashtags as
// entities; links as X's shortened display; up to four images in X's grid (or one video or GIF) with
// "ALT" badges; a long post folds at 280 characters behind "Show more". Thread items in order.
import type { PreviewInput } from "../../http/previews/index.ts";
import {
  atHandle,
  authorLine,
  findLinks,
  findMentions,
  findTags,
  html,
  mediaGrid,
  note,
  ordered,
  postText,
  previewSection,
  shortenedLink,
  whenText,
} from "../../http/previews/kit.ts";

/** Characters of a link X shows (its display_url) before "…". */
const X_DISPLAY_URL_KEEP = 25;

export function xPreview(input: PreviewInput) {
  let linked = false;
  const posts = input.items.map((item) => {
    const links = findLinks(item.body).map((l) => ({
      ...l,
      display: shortenedLink(l.href!, X_DISPLAY_URL_KEEP),
    }));
    if (links.length > 0) linked = true;
    const entities = ordered(
      links,
      findMentions(item.body, { ascii: true }),
      findTags(item.body, { cash: true }),
    );
    return html`${authorLine({ author: input.author, handle: atHandle(input.author.handle), at: whenText(input.at) })}
${postText(item.body, entities, { chars: 280, more: "Show more" })}${mediaGrid(item.media, { kind: "grid", altBadge: true })}`;
  });
  return previewSection({
    network: "X",
    slug: "x",
    posts,
    notes: [linked ? note("X posts from Herald cannot contain links: remove them to publish.") : null],
  });
}
