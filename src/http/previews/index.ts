// How a post will look on each network, drawn from what Herald sends there (not what the network's own
// app would have made of the text): the composer's live preview and the review page use it. Each
// network's drawing lives in its folder (src/providers/<network>/preview.ts); the parts they share are
// in kit.ts. Light to load: no network's text library is needed to draw.
import { blueskyPreview } from "../../providers/bluesky/preview.ts";
import { facebookPreview } from "../../providers/facebook/preview.ts";
import { instagramPreview } from "../../providers/instagram/preview.ts";
import { linkedinPreview } from "../../providers/linkedin/preview.ts";
import { mastodonPreview } from "../../providers/mastodon/preview.ts";
import { threadsPreview } from "../../providers/threads/preview.ts";
import { tiktokPreview } from "../../providers/tiktok/preview.ts";
import { xPreview } from "../../providers/x/preview.ts";
import { youtubePreview } from "../../providers/youtube/preview.ts";
import { html, type Markup } from "../pages/html.ts";
import { authorLine, findLinks, mediaGrid, ordered, postText, previewSection, whenText } from "./kit.ts";

export interface PreviewAuthor {
  name: string;
  handle: string | null;
  avatarUrl: string | null;
}
export interface PreviewMedia {
  kind: "image" | "video" | "gif";
  url: string | null;
  alt: string | null;
  width: number | null;
  height: number | null;
}
export interface PreviewItem {
  body: string;
  media: PreviewMedia[];
}
export interface PreviewInput {
  provider: string;
  author: PreviewAuthor;
  items: PreviewItem[];
  options: Record<string, unknown>;
  at: string | null;
}

/** One network's drawing of a post. */
export type NetworkPreview = (input: PreviewInput) => Markup;

/** The nine networks' previews, by channel. */
const PREVIEWS: Record<string, NetworkPreview> = {
  bluesky: blueskyPreview,
  facebook: facebookPreview,
  instagram: instagramPreview,
  linkedin: linkedinPreview,
  mastodon: mastodonPreview,
  threads: threadsPreview,
  tiktok: tiktokPreview,
  x: xPreview,
  youtube: youtubePreview,
};

/** Whether Herald draws this network's own preview (else the plain one). */
export function hasNetworkPreview(provider: string): boolean {
  return Object.hasOwn(PREVIEWS, provider);
}

/**
 * The post as `input.provider` will show it: a region named "<Network> preview" with one article per
 * item Herald sends there, every value escaped.
 */
export function renderPreview(input: PreviewInput): Markup {
  const draw = Object.hasOwn(PREVIEWS, input.provider) ? PREVIEWS[input.provider]! : plainPreview;
  return draw(input);
}

/** A network Herald registers beside the nine: the text with its links, the media in a grid. */
function plainPreview(input: PreviewInput): Markup {
  return previewSection({
    network: input.provider,
    slug: "plain",
    posts: input.items.map(
      (item) =>
        html`${authorLine({ author: input.author, handle: input.author.handle, at: whenText(input.at) })}${postText(
          item.body,
          ordered(findLinks(item.body)),
          null,
        )}${mediaGrid(item.media, { kind: "grid", altBadge: false })}`,
    ),
  });
}

/** The previews' stylesheet: appended to the dashboard's, and served with the review page. */
export { PREVIEW_CSS } from "./style.ts";
