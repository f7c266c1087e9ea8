// A stored post as the preview's input: its network, the destination it goes to as the author, its
// items with their media (short-lived download links a signed-out reader can load) and the network's
// options. Used by the review page; the composer builds its input from the form instead.
import type { Herald } from "../../herald.ts";
import { downloadLink } from "../../modules/assets/service.ts";
import type { DestinationRow } from "../../modules/destinations/repo.ts";
import { findAssets, type PostRow } from "../../modules/posts/repo.ts";
import type { PreviewInput, PreviewMedia } from "./index.ts";

/** What a media item is on a network: a video, an animated GIF or an image. */
export function mediaKindOf(contentType: string): PreviewMedia["kind"] {
  if (contentType.startsWith("video/")) return "video";
  return contentType === "image/gif" ? "gif" : "image";
}

/**
 * The preview input of a post. Alt text is the network's `alt_text_by_asset_id` (what Herald sends);
 * media links expire within minutes (assets' download links), so the page is read, not archived.
 */
export async function previewInputOfPost(
  h: Herald,
  post: PostRow,
  destination: DestinationRow | null,
): Promise<PreviewInput> {
  const options = post.destinationOptions[post.channel] ?? {};
  const altById = (options.alt_text_by_asset_id ?? {}) as Record<string, unknown>;
  const ids = [...new Set(post.assetItems.map((a) => a.asset_id))];
  const assets = new Map((await findAssets(h.db, post.workspaceId, ids)).map((a) => [a.id, a]));
  const media = new Map<string, PreviewMedia>();
  for (const [id, asset] of assets) {
    const alt = altById[id];
    media.set(id, {
      kind: mediaKindOf(asset.contentType),
      url: (await downloadLink(h, asset))?.url ?? null,
      alt: typeof alt === "string" && alt.trim() !== "" ? alt : null,
      width: asset.width,
      height: asset.height,
    });
  }
  return {
    provider: post.channel,
    author: {
      name: destination?.displayName ?? post.channel,
      handle: destination?.handle ?? null,
      avatarUrl: null,
    },
    items: post.body.map((body, index) => ({
      body,
      media: post.assetItems
        .filter((a) => a.item_index === index)
        .flatMap((a) => (media.has(a.asset_id) ? [media.get(a.asset_id)!] : [])),
    })),
    options,
    at: post.scheduledAt === null ? null : new Date(post.scheduledAt).toISOString(),
  };
}

/**
 * The origins media links point at (Herald's base URL, or an S3 bucket's presigned links), for the page's
 * CSP: it loads media from there and nowhere else.
 */
export function mediaOrigins(inputs: PreviewInput[]): string[] {
  const origins = new Set<string>();
  for (const input of inputs)
    for (const item of input.items)
      for (const m of item.media)
        if (m.url && URL.canParse(m.url)) {
          const { origin, protocol } = new URL(m.url);
          if (protocol === "https:" || protocol === "http:") origins.add(origin);
        }
  return [...origins];
}
