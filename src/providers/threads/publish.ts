// Publishing one Threads item through containers (providers.md §4.2): create the container (for a
// carousel, its children first, then the CAROUSEL container once they are FINISHED), poll its status
// until FINISHED, publish it once, then read its permalink. Polls inline only briefly; a container
// still processing becomes a pending item that `checkPending` continues from the stored ids.
import { metaGraphCall, metaProvider, type MetaAnswer } from "../meta/graph.ts";
import { THREADS_VIDEO_TYPES } from "./rules.ts";
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

/** The Graph API version Herald calls. */
export const THREADS_API_VERSION = "v1.0";

/** When to check a pending container again (Meta suggests about once a minute while media processes). */
export const THREADS_PENDING_CHECK_MS = 30_000;

/** A container not published within 24 h expires; one still processing after that is given up. */
export const THREADS_CONTAINER_LIFETIME_MS = 24 * 60 * 60_000;

/** How far before the pending time a post found on the profile may be dated (clock skew). */
const RECOVERY_SLACK_MS = 10 * 60_000;

/** How many of the profile's latest posts are searched for a container published without a receipt. */
const RECOVERY_SCAN = 25;

/** What a pending Threads item stores: its containers' ids. */
export interface ThreadsPendingData {
  /** Carousel item containers, in media order ([] for a text, image or video post). */
  children: string[];
  /** The container to publish; null while carousel items are still processing. */
  container: string | null;
  [key: string]: unknown;
}

/**
 * One status round: ready to publish, still processing, a CAROUSEL container just made (to be stored
 * before it is published), expired unpublished, or already published.
 */
type Round =
  | { kind: "ready"; container: string }
  | { kind: "created"; data: ThreadsPendingData }
  | { kind: "waiting"; data: ThreadsPendingData }
  | { kind: "expired"; reason: string }
  | { kind: "published"; container: string };

/** The publishing half of the Threads adapter. */
export type ThreadsPublisher = PendingPublisher;

/** Builds the container flow over `deps` (fetch, clock, poll pace). */
export function createThreadsPublisher(deps: AdapterDeps): ThreadsPublisher {
  const pollIntervalMs = deps.pollIntervalMs ?? 1000;
  const maxPolls = Math.max(1, deps.maxPolls ?? 5);

  /**
   * A Graph call on the destination's API origin; the token goes as the documented `access_token`
   * parameter.
   */
  function graph(input: {
    destination: DestinationRef;
    method: "GET" | "POST";
    path: string;
    params: Record<string, string>;
    operation: string;
    idempotent: boolean;
  }): Promise<MetaAnswer> {
    const { destination, method, params } = input;
    const url = new URL(`${destination.origin.replace(/\/+$/, "")}/${THREADS_API_VERSION}/${input.path}`);
    const withToken = { ...params, access_token: String(destination.credentials.accessToken ?? "") };
    let init: RequestInit = {};
    if (method === "GET")
      for (const [key, value] of Object.entries(withToken)) url.searchParams.set(key, value);
    else
      init = {
        method,
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(withToken),
      };
    return metaGraphCall({
      deps,
      operation: input.operation,
      url: String(url),
      init,
      idempotent: input.idempotent,
    });
  }

  /** Creates one container; idempotent: a container publishes nothing and expires unused. */
  async function createContainer(input: PublishItemInput, params: Record<string, string>): Promise<string> {
    const { body } = await graph({
      destination: input.destination,
      method: "POST",
      path: `${encodeURIComponent(input.destination.externalId)}/threads`,
      params,
      operation: "POST /{user-id}/threads",
      idempotent: true,
    });
    if (typeof body.id !== "string" && typeof body.id !== "number")
      throw new ProviderError("transient", "POST /{user-id}/threads: the answer has no container id", {
        operation: "POST /{user-id}/threads",
      });
    return String(body.id);
  }

  /** What the post's own container carries besides media: text, the item it replies to, reply_control. */
  function postParams(input: PublishItemInput): Record<string, string> {
    const replyControl = input.options.reply_control;
    return {
      ...(input.text !== "" ? { text: input.text } : {}),
      ...(input.parent ? { reply_to_id: input.parent.providerObjectId } : {}),
      ...(typeof replyControl === "string" ? { reply_control: replyControl } : {}),
    };
  }

  function mediaParams(input: PublishItemInput, media: MediaItem, url: string): Record<string, string> {
    const altById = (input.options.alt_text_by_asset_id ?? {}) as Record<string, unknown>;
    const alt = media.altText ?? (typeof altById[media.assetId] === "string" ? altById[media.assetId] : null);
    const video = THREADS_VIDEO_TYPES.includes(media.contentType);
    return {
      media_type: video ? "VIDEO" : "IMAGE",
      [video ? "video_url" : "image_url"]: url,
      ...(typeof alt === "string" && alt !== "" ? { alt_text: alt } : {}),
    };
  }

  /** The first containers of an item: its own (text, image, video), or a carousel's items. */
  async function createContainers(input: PublishItemInput): Promise<ThreadsPendingData> {
    // Every URL is signed before anything is sent: a failure here leaves nothing on the network.
    const urls = input.media.map((media) => media.publicUrl());
    if (input.media.length === 0)
      return {
        children: [],
        container: await createContainer(input, { media_type: "TEXT", ...postParams(input) }),
      };
    if (input.media.length === 1)
      return {
        children: [],
        container: await createContainer(input, {
          ...mediaParams(input, input.media[0]!, urls[0]!),
          ...postParams(input),
        }),
      };
    const children: string[] = [];
    for (const [i, media] of input.media.entries())
      children.push(
        await createContainer(input, { ...mediaParams(input, media, urls[i]!), is_carousel_item: "true" }),
      );
    return { children, container: null };
  }

  async function statusOf(destination: DestinationRef, container: string) {
    const { body } = await graph({
      destination,
      method: "GET",
      path: encodeURIComponent(container),
      params: { fields: "status,error_message" },
      operation: "GET /{container-id}",
      idempotent: true,
    });
    return {
      status: typeof body.status === "string" ? body.status : "",
      errorMessage: typeof body.error_message === "string" ? body.error_message : null,
    };
  }

  /**
   * One look at the item's containers; creates the CAROUSEL container once its items are FINISHED. In a
   * status check (`storeFirst`) a new CAROUSEL container is handed back to be stored before it is
   * published: a check that dies after publishing is run again, and only a stored container id lets
   * that run see it PUBLISHED and find the post instead of making and publishing a second carousel.
   */
  async function round(
    input: PublishItemInput,
    data: ThreadsPendingData,
    storeFirst: boolean,
  ): Promise<Round> {
    let container = data.container;
    if (container === null) {
      const statuses = [];
      for (const child of data.children) statuses.push(await statusOf(input.destination, child));
      statuses.forEach((s, i) => {
        if (s.status === "ERROR") throw containerError(input, s.errorMessage, i);
      });
      if (statuses.some((s) => s.status === "EXPIRED"))
        return { kind: "expired", reason: "a carousel item's container expired before it was published" };
      if (!statuses.every((s) => s.status === "FINISHED")) return { kind: "waiting", data };
      container = await createContainer(input, {
        media_type: "CAROUSEL",
        children: data.children.join(","),
        ...postParams(input),
      });
      if (storeFirst) return { kind: "created", data: { ...data, container } };
    }
    const { status, errorMessage } = await statusOf(input.destination, container);
    if (status === "FINISHED") return { kind: "ready", container };
    if (status === "PUBLISHED") return { kind: "published", container };
    if (status === "ERROR") throw containerError(input, errorMessage, null);
    if (status === "EXPIRED")
      return {
        kind: "expired",
        reason: "the container expired before it was published (nothing was published)",
      };
    return { kind: "waiting", data: { ...data, container } };
  }

  /**
   * Rounds until the container is ready (then publishes it) or the inline polls are used up; in a status
   * check a new CAROUSEL container is first handed back for storing, due at once.
   */
  async function drive(
    input: PublishItemInput,
    start: ThreadsPendingData,
    since: number,
    inCheck: boolean,
  ): Promise<PendingStatus> {
    let data = start;
    for (let poll = 1; ; poll++) {
      const step = await round(input, data, inCheck);
      if (step.kind === "created")
        return { state: "pending", checkAgainAt: deps.clock.now(), data: step.data };
      if (step.kind === "ready")
        return { state: "published", item: await publish(input, step.container, since) };
      if (step.kind === "published")
        return { state: "published", item: await recover(input, step.container, since) };
      if (step.kind === "expired") return { state: "gone", reason: step.reason };
      data = step.data;
      if (poll >= maxPolls)
        return { state: "pending", checkAgainAt: deps.clock.now() + THREADS_PENDING_CHECK_MS, data };
      await sleep(pollIntervalMs);
    }
  }

  /**
   * threads_publish, once (not idempotent: an unanswered publish is `outcome_unknown`). A refusal of a
   * container that turns out PUBLISHED is the earlier publish: its post is looked up, never re-sent.
   * Nothing after a successful publish throws anything but `outcome_unknown`.
   */
  async function publish(input: PublishItemInput, container: string, since: number): Promise<PublishedItem> {
    const operation = "POST /{user-id}/threads_publish";
    let answer: MetaAnswer;
    try {
      answer = await graph({
        destination: input.destination,
        method: "POST",
        path: `${encodeURIComponent(input.destination.externalId)}/threads_publish`,
        params: { creation_id: container },
        operation,
        idempotent: false,
      });
    } catch (error) {
      if (
        error instanceof ProviderError &&
        error.kind === "rejected" &&
        (await isPublished(input, container))
      )
        return recover(input, container, since);
      throw error;
    }
    const id = answer.body.id;
    if (typeof id !== "string" && typeof id !== "number") return recover(input, container, since);
    const mediaId = String(id);
    return {
      providerObjectId: mediaId,
      url: await permalinkOf(input, mediaId),
      extra: { id: mediaId, container },
      provider: metaProvider(operation, answer),
    };
  }

  async function isPublished(input: PublishItemInput, container: string): Promise<boolean> {
    try {
      return (await statusOf(input.destination, container)).status === "PUBLISHED";
    } catch {
      return false;
    }
  }

  /** The post's permalink; never throws (the post exists): falls back to the profile's URL. */
  async function permalinkOf(input: PublishItemInput, mediaId: string): Promise<string> {
    try {
      const { body } = await graph({
        destination: input.destination,
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
    return profileUrl(input.destination);
  }

  /**
   * A container Threads reports PUBLISHED although Herald holds no receipt (a run that died after
   * publishing): the post is looked up among the profile's latest posts (or replies) by its text,
   * its time and the item it replies to. One match is the receipt; otherwise `outcome_unknown`, and
   * the container is never published again.
   */
  async function recover(input: PublishItemInput, container: string, since: number): Promise<PublishedItem> {
    const operation = input.parent ? "GET /{user-id}/replies" : "GET /{user-id}/threads";
    let reason: string;
    try {
      const { body } = await graph({
        destination: input.destination,
        method: "GET",
        path: `${encodeURIComponent(input.destination.externalId)}/${input.parent ? "replies" : "threads"}`,
        params: {
          fields: input.parent ? "id,text,timestamp,permalink,replied_to" : "id,text,timestamp,permalink",
          limit: String(RECOVERY_SCAN),
        },
        operation,
        idempotent: true,
      });
      const posts: Record<string, any>[] = Array.isArray(body.data) ? body.data : [];
      const matches = posts.filter(
        (p) =>
          (p.text ?? "") === input.text &&
          parseGraphTime(p.timestamp) >= since - RECOVERY_SLACK_MS &&
          (!input.parent || !p.replied_to?.id || String(p.replied_to.id) === input.parent.providerObjectId),
      );
      if (matches.length === 1) {
        const post = matches[0]!;
        const mediaId = String(post.id);
        const url = typeof post.permalink === "string" ? post.permalink : profileUrl(input.destination);
        return {
          providerObjectId: mediaId,
          url,
          extra: { id: mediaId, container, recovered: true },
          provider: { operation, requestId: null, statusCode: 200 },
        };
      }
      reason =
        matches.length === 0
          ? "none of the profile's latest posts matches it"
          : `${matches.length} of the profile's latest posts match it`;
    } catch (error) {
      reason = `the profile's latest posts could not be read (${error instanceof Error ? error.message : error})`;
    }
    throw new ProviderError(
      "outcome_unknown",
      `Threads reports container ${container} as already published, but Herald cannot tell which post it ` +
        `became: ${reason}. Herald will not publish it again; check the profile.`,
      { operation: "POST /{user-id}/threads_publish" },
    );
  }

  return {
    async publishItem(input) {
      const since = deps.clock.now();
      const data = await createContainers(input);
      const status = await drive(input, data, since, false);
      if (status.state === "published") return status.item;
      if (status.state === "gone")
        throw new ProviderError("transient", `Threads: ${status.reason}`, {
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
      const stored = pendingData(data);
      const status = await drive(item, stored, since, true);
      if (status.state === "pending" && deps.clock.now() - since > THREADS_CONTAINER_LIFETIME_MS)
        throw new ProviderError(
          "rejected",
          "Threads was still processing the media 24 hours later; nothing was published",
          { operation: "GET /{container-id}" },
        );
      return status;
    },
  };
}

/** A container's ERROR as a refusal, with Meta's reason (FAILED_DOWNLOADING_VIDEO, INVALID_DURATION, …). */
function containerError(
  input: PublishItemInput,
  reason: string | null,
  mediaIndex: number | null,
): ProviderError {
  const what =
    mediaIndex === null
      ? "Threads could not process the post"
      : `Threads could not process media ${mediaIndex} (${input.media[mediaIndex]?.assetId ?? "?"})`;
  const hint = /DOWNLOAD|FETCH/i.test(reason ?? "")
    ? "; Meta downloads media from Herald's public URL, which must be reachable from the internet"
    : "";
  return new ProviderError("rejected", `${what}: ${reason ?? "UNKNOWN"}${hint}`, {
    operation: "GET /{container-id}",
    errorCode: reason,
  });
}

/** The stored pending data, read defensively (it round-trips through the database as JSON). */
function pendingData(data: Record<string, unknown>): ThreadsPendingData {
  const children = Array.isArray(data.children) ? data.children.map(String) : [];
  const container = typeof data.container === "string" ? data.container : null;
  if (container === null && children.length === 0)
    throw new ProviderError("outcome_unknown", "the pending Threads item has no container ids", {
      operation: "checkPending",
    });
  return { children, container };
}

/** Graph times are ISO 8601 with a `+0000` offset; NaN when unreadable. */
function parseGraphTime(value: unknown): number {
  if (typeof value !== "string") return Number.NaN;
  return Date.parse(value.replace(/([+-]\d\d)(\d\d)$/, "$1:$2"));
}

/** The profile's public URL, the receipt URL when a post's permalink cannot be read. */
export function profileUrl(destination: DestinationRef): string {
  return `https://www.threads.net/@${encodeURIComponent(destination.handle)}`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
