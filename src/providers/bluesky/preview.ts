// How a Bluesky post Herald sends will look: display name, @handle, time; the text exactly as sent
// (links in full, as Herald writes no shortened link text), highlighted only where Herald adds a facet
// (facets.ts: links, #tags, and mentions of handles, which resolve when they exist); images in the
// app's grid with "ALT" badges; text past 25 lines folds. No link card: Herald builds none.
import type { PreviewInput } from "../../http/previews/index.ts";
import {
  atHandle,
  authorLine,
  html,
  mediaGrid,
  note,
  ordered,
  postText,
  previewSection,
  whenText,
  type TextEntity,
} from "../../http/previews/kit.ts";
import { stringList } from "../text.ts";
import { findFacetCandidates } from "./facets.ts";

/** The app clamps post text at this many lines (social-app MAX_POST_LINES). */
const BLUESKY_MAX_LINES = 25;

const LABEL_NAMES: Record<string, string> = {
  sexual: "Sexually suggestive",
  nudity: "Non-sexual nudity",
  porn: "Adult content",
  "graphic-media": "Graphic media",
};

export function blueskyPreview(input: PreviewInput) {
  const labels = stringList(input.options.content_labels).map((l) => LABEL_NAMES[l] ?? l);
  const posts = input.items.map((item) => {
    const entities: TextEntity[] = findFacetCandidates(item.body).map((c) =>
      c.kind === "link"
        ? { kind: "link", start: c.start, end: c.end, href: c.uri }
        : { kind: c.kind, start: c.start, end: c.end },
    );
    const warning =
      labels.length > 0 && item.media.length > 0
        ? html`<p class="pv-warning">Content warning: ${labels.join(", ")}</p>`
        : null;
    return html`${authorLine({ author: input.author, handle: atHandle(input.author.handle), at: whenText(input.at) })}
${postText(item.body, ordered(entities), { lines: BLUESKY_MAX_LINES, more: "Show more" })}${warning}
${mediaGrid(item.media, { kind: "grid", altBadge: true })}`;
  });
  const unlinked = input.items.some((i) => /(^|\s)@[a-z0-9-]+\.[a-z]/i.test(i.body));
  return previewSection({
    network: "Bluesky",
    slug: "bluesky",
    posts,
    notes: [
      unlinked ? note("A mention becomes a link only if that handle exists when the post goes out.") : null,
    ],
  });
}
