// Publishing one Instagram item (providers.md §5.2) through Meta's container flow (meta/containers.ts):
// what is Instagram's own is here. The publishing limit is read first; an item needs media (one image
// or a reel, or a carousel of images and videos); a carousel item reports PUBLISHED once its carousel
// is; a post published without a receipt is found by its caption among the account's latest media.
import { graphCall } from "../facebook/graph.ts";
import {
  createContainerPublisher,
  META_CONTAINER_CHECK_MS,
  META_CONTAINER_LIFETIME_MS,
  META_RECOVERY_SCAN,
  sameText,
  type ContainerData,
  type ContainerNetwork,
  type ContainerPublisher,
} from "../meta/containers.ts";
import { META_PUBLISHING_LIMIT_FALLBACK_MS } from "../meta/graph.ts";
import { INSTAGRAM_VIDEO_TYPES } from "./rules.ts";
import {
  ProviderError,
  type AdapterDeps,
  type DestinationRef,
  type MediaItem,
  type PublishItemInput,
} from "../types.ts";

/** When to check a pending container again (Meta suggests about once a minute, for up to 5 minutes). */
export const INSTAGRAM_PENDING_CHECK_MS = META_CONTAINER_CHECK_MS;

/** A container not published within 24 h expires; one still processing after that is given up. */
export const INSTAGRAM_CONTAINER_LIFETIME_MS = META_CONTAINER_LIFETIME_MS;

/** What a pending Instagram item stores (no secrets): its containers' ids. */
export type InstagramPendingData = ContainerData;

/** The publishing half of the Instagram adapter. */
export type InstagramPublisher = ContainerPublisher;

/** Builds the container flow over `deps` (fetch, clock, poll pace). */
export function createInstagramPublisher(deps: AdapterDeps): InstagramPublisher {
  const call: ContainerNetwork["call"] = (destination, request) => instagramCall(deps, destination, request);
  return createContainerPublisher(deps, {
    name: "Instagram",
    owner: "account",
    call,
    create: { operation: "POST /{ig-user-id}/media", path: (d) => `${account(d)}/media` },
    publish: { operation: "POST /{ig-user-id}/media_publish", path: (d) => `${account(d)}/media_publish` },
    statusFields: "status_code,status",
    readStatus: (body) => ({
      code: typeof body.status_code === "string" ? body.status_code : "",
      detail: typeof body.status === "string" && body.status !== "" ? body.status : null,
    }),
    /** An image or a reel as its own container, or a carousel's items. */
    async firstContainers(input, createContainer) {
      const urls = input.media.map((media) => media.publicUrl());
      if (input.media.length === 0)
        throw new ProviderError("rejected", "Instagram cannot publish a post without an image or video", {
          operation: "publishItem",
        });
      if (input.media.length === 1)
        return {
          children: [],
          container: await createContainer({
            ...mediaParams(input, input.media[0]!, urls[0]!, false),
            ...caption(input),
          }),
        };
      const children: string[] = [];
      for (const [i, media] of input.media.entries())
        children.push(await createContainer(mediaParams(input, media, urls[i]!, true)));
      return { children, container: null };
    },
    carouselParams: caption,
    itemsReportPublished: true,
    storeCarouselFirst: false,
    containerError,
    profileUrl: instagramProfileUrl,
    recovery: (input) => ({
      operation: "GET /{ig-user-id}/media",
      path: `${account(input.destination)}/media`,
      params: { fields: "id,caption,timestamp,permalink", limit: String(META_RECOVERY_SCAN) },
      matches: (post) => sameText(post.caption, input.text),
      timestamp: (post) => post.timestamp,
    }),
    beforeCreate: (destination) => checkPublishingLimit(deps, destination),
  });
}

/** A Graph call with the account's Page token. */
function instagramCall(
  deps: AdapterDeps,
  destination: DestinationRef,
  request: Parameters<ContainerNetwork["call"]>[1],
): ReturnType<ContainerNetwork["call"]> {
  return graphCall({
    deps,
    origin: destination.origin,
    token: String(destination.credentials.accessToken ?? ""),
    ...request,
  });
}

/**
 * Refuses to start when the account used its API posts of the last 24 h (content_publishing_limit):
 * `transient`, retried in an hour (the window frees one post at a time).
 */
async function checkPublishingLimit(deps: AdapterDeps, destination: DestinationRef): Promise<void> {
  const operation = "GET /{ig-user-id}/content_publishing_limit";
  const { body } = await instagramCall(deps, destination, {
    method: "GET",
    path: `${account(destination)}/content_publishing_limit`,
    params: { fields: "quota_usage,config" },
    operation,
    idempotent: true,
  });
  const limit = Array.isArray(body.data) ? body.data[0] : null;
  const used = Number(limit?.quota_usage);
  const total = Number(limit?.config?.quota_total);
  if (Number.isFinite(used) && Number.isFinite(total) && total > 0 && used >= total)
    throw new ProviderError(
      "transient",
      `Instagram: the account published ${used} of its ${total} API posts in the last 24 hours`,
      {
        operation,
        errorCode: "content_publishing_limit",
        retryAt: deps.clock.now() + META_PUBLISHING_LIMIT_FALLBACK_MS,
      },
    );
}

/** The account id as a path segment. */
function account(destination: DestinationRef): string {
  return encodeURIComponent(destination.externalId);
}

/** The caption field, when the item has text. */
function caption(input: PublishItemInput): Record<string, string> {
  return input.text !== "" ? { caption: input.text } : {};
}

/** A media item's container fields: `alt_text_by_asset_id` wins over the asset's own alt text. */
function mediaParams(
  input: PublishItemInput,
  media: MediaItem,
  url: string,
  carousel: boolean,
): Record<string, string> {
  if (INSTAGRAM_VIDEO_TYPES.includes(media.contentType))
    return {
      media_type: carousel ? "VIDEO" : "REELS",
      video_url: url,
      ...(carousel ? { is_carousel_item: "true" } : {}),
    };
  const byId = (input.options.alt_text_by_asset_id ?? {}) as Record<string, unknown>;
  const alt = typeof byId[media.assetId] === "string" ? (byId[media.assetId] as string) : media.altText;
  return {
    image_url: url,
    ...(carousel ? { is_carousel_item: "true" } : {}),
    ...(alt ? { alt_text: alt } : {}),
  };
}

/** A container's ERROR as a refusal, with Meta's reason (the container's `status`). */
function containerError(input: PublishItemInput, reason: string | null, mediaIndex: number | null) {
  const what =
    mediaIndex === null
      ? "Instagram could not process the post"
      : `Instagram could not process media ${mediaIndex} (${input.media[mediaIndex]?.assetId ?? "?"})`;
  const hint = /download|fetch|2207052|2207003|2207077/i.test(reason ?? "")
    ? "; Meta downloads media from Herald's public URL, which must be reachable from the internet"
    : "";
  return new ProviderError("rejected", `${what}: ${reason ?? "ERROR"}${hint}`, {
    operation: "GET /{container-id}",
    errorCode: "ERROR",
  });
}

/** The account's public URL, the receipt URL when a post's permalink cannot be read. */
export function instagramProfileUrl(destination: DestinationRef): string {
  return `https://www.instagram.com/${encodeURIComponent(destination.handle)}/`;
}
