// Publishing one Instagram item through containers (providers.md §5.2): read the publishing limit,
// create the container (a carousel's items first, then the CAROUSEL container once they are FINISHED),
// poll its status_code until FINISHED, media_publish it once, then read its permalink. Polls inline
// only briefly; a container still processing becomes a pending item `checkPending` continues.
import { graphCall, idOf, parseGraphTime, sleep } from "../facebook/graph.ts";
import { INSTAGRAM_VIDEO_TYPES } from "./rules.ts";
import { META_PUBLISHING_LIMIT_FALLBACK_MS, metaProvider, type MetaAnswer } from "../meta/graph.ts";
import {
  ProviderError,
  type AdapterDeps,
  type DestinationRef,
  type MediaItem,
  type PendingStatus,
  type PublishedItem,
  type PublishItemInput,
  type PendingPublisher,
} from "../types.ts";

/** When to check a pending container again (Meta suggests about once a minute, for up to 5 minutes). */
export const INSTAGRAM_PENDING_CHECK_MS = 30_000;

/** A container not published within 24 h expires; one still processing after that is given up. */
export const INSTAGRAM_CONTAINER_LIFETIME_MS = 24 * 60 * 60_000;

/** How far before the pending time a post found on the account may be dated (clock skew). */
const RECOVERY_SLACK_MS = 10 * 60_000;

/** How many of the account's latest posts are searched for a container published without a receipt. */
const RECOVERY_SCAN = 25;

/** What a pending Instagram item stores (no secrets): its containers' ids. */
export interface InstagramPendingData {
  /** Carousel item containers, in media order ([] for a single image or reel). */
  children: string[];
  /** The container to publish; null while carousel items are still processing. */
  container: string | null;
  [key: string]: unknown;
}

/** One status round: ready to publish, still processing, expired unpublished, or already published. */
type Round =
  | { kind: "ready"; container: string }
  | { kind: "waiting"; data: InstagramPendingData }
  | { kind: "expired"; reason: string }
  | { kind: "published"; container: string };

/** The publishing half of the Instagram adapter. */
export type InstagramPublisher = PendingPublisher;

/** Builds the container flow over `deps` (fetch, clock, poll pace). */
export function createInstagramPublisher(deps: AdapterDeps): InstagramPublisher {
  const pollIntervalMs = deps.pollIntervalMs ?? 1000;
  const maxPolls = Math.max(1, deps.maxPolls ?? 5);

  function call(
    destination: DestinationRef,
    request: Omit<Parameters<typeof graphCall>[0], "deps" | "origin" | "token">,
  ): Promise<MetaAnswer> {
    return graphCall({
      deps,
      origin: destination.origin,
      token: String(destination.credentials.accessToken ?? ""),
      ...request,
    });
  }

  const account = (destination: DestinationRef) => encodeURIComponent(destination.externalId);

  /**
   * Refuses to start when the account used its API posts of the last 24 h (content_publishing_limit):
   * `transient`, retried in an hour (the window frees one post at a time).
   */
  async function checkPublishingLimit(destination: DestinationRef): Promise<void> {
    const operation = "GET /{ig-user-id}/content_publishing_limit";
    const { body } = await call(destination, {
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

  /** Creates one container; idempotent: a container publishes nothing and expires unused. */
  async function createContainer(input: PublishItemInput, params: Record<string, string>): Promise<string> {
    const operation = "POST /{ig-user-id}/media";
    const { body } = await call(input.destination, {
      method: "POST",
      path: `${account(input.destination)}/media`,
      params,
      operation,
      idempotent: true,
    });
    return idOf(body, "id", operation, true);
  }

  function caption(input: PublishItemInput): Record<string, string> {
    return input.text !== "" ? { caption: input.text } : {};
  }

  /** A media item's container fields: `alt_text_by_asset_id` wins over the asset's own alt text. */
  function mediaParams(input: PublishItemInput, media: MediaItem, url: string, carousel: boolean) {
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

  /** The first containers of an item: its own (an image or a reel), or a carousel's items. */
  async function createContainers(input: PublishItemInput): Promise<InstagramPendingData> {
    // Every URL is signed before anything is sent: a failure here leaves nothing on the network.
    const urls = input.media.map((media) => media.publicUrl());
    if (input.media.length === 0)
      throw new ProviderError("rejected", "Instagram cannot publish a post without an image or video", {
        operation: "publishItem",
      });
    if (input.media.length === 1)
      return {
        children: [],
        container: await createContainer(input, {
          ...mediaParams(input, input.media[0]!, urls[0]!, false),
          ...caption(input),
        }),
      };
    const children: string[] = [];
    for (const [i, media] of input.media.entries())
      children.push(await createContainer(input, mediaParams(input, media, urls[i]!, true)));
    return { children, container: null };
  }

  async function statusOf(destination: DestinationRef, container: string) {
    const { body } = await call(destination, {
      method: "GET",
      path: encodeURIComponent(container),
      params: { fields: "status_code,status" },
      operation: "GET /{container-id}",
      idempotent: true,
    });
    return {
      code: typeof body.status_code === "string" ? body.status_code : "",
      detail: typeof body.status === "string" && body.status !== "" ? body.status : null,
    };
  }

  /** One look at the item's containers; creates the CAROUSEL container once its items are FINISHED. */
  async function round(input: PublishItemInput, data: InstagramPendingData): Promise<Round> {
    let container = data.container;
    if (container === null) {
      const statuses = [];
      for (const child of data.children) statuses.push(await statusOf(input.destination, child));
      statuses.forEach((s, i) => {
        if (s.code === "ERROR") throw containerError(input, s.detail, i);
      });
      // Items of a carousel an earlier run published: that run's post is looked up, never re-sent.
      const published = statuses.findIndex((s) => s.code === "PUBLISHED");
      if (published >= 0) return { kind: "published", container: data.children[published]! };
      if (statuses.some((s) => s.code === "EXPIRED"))
        return { kind: "expired", reason: "a carousel item's container expired before it was published" };
      if (!statuses.every((s) => s.code === "FINISHED")) return { kind: "waiting", data };
      container = await createContainer(input, {
        media_type: "CAROUSEL",
        children: data.children.join(","),
        ...caption(input),
      });
    }
    const { code, detail } = await statusOf(input.destination, container);
    if (code === "FINISHED") return { kind: "ready", container };
    if (code === "PUBLISHED") return { kind: "published", container };
    if (code === "ERROR") throw containerError(input, detail, null);
    if (code === "EXPIRED")
      return { kind: "expired", reason: "the container expired before it was published (nothing was)" };
    return { kind: "waiting", data: { ...data, container } };
  }

  /** Rounds until the container is ready (then publishes it) or the inline polls are used up. */
  async function drive(
    input: PublishItemInput,
    start: InstagramPendingData,
    since: number,
  ): Promise<PendingStatus> {
    let data = start;
    for (let poll = 1; ; poll++) {
      const step = await round(input, data);
      if (step.kind === "ready")
        return { state: "published", item: await publish(input, step.container, since) };
      if (step.kind === "published")
        return { state: "published", item: await recover(input, step.container, since) };
      if (step.kind === "expired") return { state: "gone", reason: step.reason };
      data = step.data;
      if (poll >= maxPolls)
        return { state: "pending", checkAgainAt: deps.clock.now() + INSTAGRAM_PENDING_CHECK_MS, data };
      await sleep(pollIntervalMs);
    }
  }

  /**
   * media_publish, once (not idempotent: an unanswered publish is `outcome_unknown`). A refusal of a
   * container that turns out PUBLISHED is an earlier publish: its post is looked up, never re-sent.
   * Nothing after a successful publish throws anything but `outcome_unknown`.
   */
  async function publish(input: PublishItemInput, container: string, since: number): Promise<PublishedItem> {
    const operation = "POST /{ig-user-id}/media_publish";
    let answer: MetaAnswer;
    try {
      answer = await call(input.destination, {
        method: "POST",
        path: `${account(input.destination)}/media_publish`,
        params: { creation_id: container },
        operation,
        idempotent: false,
      });
    } catch (error) {
      if (
        error instanceof ProviderError &&
        error.kind === "rejected" &&
        (await isPublished(input.destination, container))
      )
        return recover(input, container, since);
      throw error;
    }
    const id = answer.body.id;
    if (typeof id !== "string" && typeof id !== "number") return recover(input, container, since);
    const mediaId = String(id);
    return {
      providerObjectId: mediaId,
      url: await permalinkOf(input.destination, mediaId),
      extra: { id: mediaId, container },
      provider: metaProvider(operation, answer),
    };
  }

  async function isPublished(destination: DestinationRef, container: string): Promise<boolean> {
    try {
      return (await statusOf(destination, container)).code === "PUBLISHED";
    } catch {
      return false;
    }
  }

  /** The post's permalink; never throws (the post exists): falls back to the account's URL. */
  async function permalinkOf(destination: DestinationRef, mediaId: string): Promise<string> {
    try {
      const { body } = await call(destination, {
        method: "GET",
        path: encodeURIComponent(mediaId),
        params: { fields: "permalink" },
        operation: "GET /{media-id}?fields=permalink",
        idempotent: true,
      });
      if (typeof body.permalink === "string" && /^https:\/\//.test(body.permalink)) return body.permalink;
    } catch {
      // The post is published; a missing permalink is no reason to fail it.
    }
    return instagramProfileUrl(destination);
  }

  /**
   * A container Instagram reports PUBLISHED although Herald holds no receipt (a run that died after
   * publishing): the post is looked up among the account's latest posts by its caption and time. One
   * match is the receipt; otherwise `outcome_unknown`, and the container is never published again.
   */
  async function recover(input: PublishItemInput, container: string, since: number): Promise<PublishedItem> {
    const operation = "GET /{ig-user-id}/media";
    let reason: string;
    try {
      const { body } = await call(input.destination, {
        method: "GET",
        path: `${account(input.destination)}/media`,
        params: { fields: "id,caption,timestamp,permalink", limit: String(RECOVERY_SCAN) },
        operation,
        idempotent: true,
      });
      const posts: Record<string, any>[] = Array.isArray(body.data) ? body.data : [];
      const matches = posts.filter(
        (p) => (p.caption ?? "") === input.text && parseGraphTime(p.timestamp) >= since - RECOVERY_SLACK_MS,
      );
      if (matches.length === 1) {
        const mediaId = String(matches[0]!.id);
        const permalink = matches[0]!.permalink;
        return {
          providerObjectId: mediaId,
          url: typeof permalink === "string" ? permalink : instagramProfileUrl(input.destination),
          extra: { id: mediaId, container, recovered: true },
          provider: { operation, requestId: null, statusCode: 200 },
        };
      }
      reason =
        matches.length === 0
          ? "none of the account's latest posts matches it"
          : `${matches.length} of the account's latest posts match it`;
    } catch (error) {
      reason = `the account's latest posts could not be read (${error instanceof Error ? error.message : error})`;
    }
    throw new ProviderError(
      "outcome_unknown",
      `Instagram reports container ${container} as already published, but Herald cannot tell which post ` +
        `it became: ${reason}. Herald will not publish it again; check the account.`,
      { operation: "POST /{ig-user-id}/media_publish" },
    );
  }

  return {
    async publishItem(input) {
      const since = deps.clock.now();
      await checkPublishingLimit(input.destination);
      const data = await createContainers(input);
      const status = await drive(input, data, since);
      if (status.state === "published") return status.item;
      if (status.state === "gone")
        throw new ProviderError("transient", `Instagram: ${status.reason}`, {
          operation: "GET /{container-id}",
        });
      return {
        pending: true,
        data: status.data ?? data,
        checkAgainAt: status.checkAgainAt,
        provider: { operation: "GET /{container-id}", requestId: null, statusCode: 200 },
      };
    },

    async checkPending({ item, data, since }) {
      const status = await drive(item, pendingData(data), since);
      if (status.state === "pending" && deps.clock.now() - since > INSTAGRAM_CONTAINER_LIFETIME_MS)
        throw new ProviderError(
          "rejected",
          "Instagram was still processing the media 24 hours later; nothing was published",
          { operation: "GET /{container-id}" },
        );
      return status;
    },
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

/** The stored pending data, read defensively (it round-trips through the database as JSON). */
function pendingData(data: Record<string, unknown>): InstagramPendingData {
  const children = Array.isArray(data.children) ? data.children.map(String) : [];
  const container = typeof data.container === "string" ? data.container : null;
  if (container === null && children.length === 0)
    throw new ProviderError("outcome_unknown", "the pending Instagram item has no container ids", {
      operation: "checkPending",
    });
  return { children, container };
}

/** The account's public URL, the receipt URL when a post's permalink cannot be read. */
export function instagramProfileUrl(destination: DestinationRef): string {
  return `https://www.instagram.com/${encodeURIComponent(destination.handle)}/`;
}
