// Meta's container flow, shared by Instagram (providers.md §5.2) and Threads (§4.2): create the item's
// container (for a carousel, its items first, then the CAROUSEL container once they are FINISHED),
// poll its status until FINISHED, publish it once, then read its permalink. Polls inline only briefly;
// a container still processing becomes a pending item that `checkPending` continues from the stored
// ids. What differs between the two networks (paths, fields, parameters, error wording, how a post
// published without a receipt is found) is a `ContainerNetwork`, in each network's folder.
import { idOf, parseGraphTime, sleep } from "../facebook/graph.ts";
import { listingFloor } from "../reconcile-listing.ts";
import { isMetaWait } from "./errors.ts";
import { metaProvider, type MetaAnswer } from "./graph.ts";
import {
  ProviderError,
  type AdapterDeps,
  type DestinationRef,
  type PendingPublisher,
  type PendingStatus,
  type ProviderAdapter,
  type PublishedItem,
  type PublishItemInput,
  type ReconcileResult,
  UnresolvedOutcome,
} from "../types.ts";

/** When to check a pending container again (Meta suggests about once a minute while media processes). */
export const META_CONTAINER_CHECK_MS = 30_000;

/** A container not published within 24 h expires; one still processing after that is given up. */
export const META_CONTAINER_LIFETIME_MS = 24 * 60 * 60_000;

/**
 * How many times one run waits (the poll interval) and publishes again when Meta answers the publish
 * "not ready for publishing, please wait" (9007/2207027), which it does even after the status read FINISHED.
 */
export const META_NOT_READY_WAITS = 3;

/** How many of the account's latest posts one page of a look-up asks for. */
export const META_RECOVERY_SCAN = 25;

/** Pages of the account's latest posts (newest first, META_RECOVERY_SCAN each) one look-up reads at most. */
export const META_RECOVERY_PAGES = 3;

/**
 * Whether a listed post's text (caption) is the item's: the same once line endings and the ends'
 * whitespace are set aside (which Meta may not keep as sent). A post without text lists none.
 */
export function sameText(listed: unknown, sent: string): boolean {
  const plain = (text: string) => text.replace(/\r\n?/g, "\n").trim();
  return plain(typeof listed === "string" ? listed : "") === plain(sent);
}

/** What a pending item stores (no secrets): its containers' ids. */
export interface ContainerData {
  /** Carousel item containers, in media order ([] for a post of one container). */
  children: string[];
  /** The container to publish; null while carousel items are still processing. */
  container: string | null;
  [key: string]: unknown;
}

/** One Graph call of the flow, on the destination's origin with its token. */
export interface ContainerCall {
  method: "GET" | "POST";
  path: string;
  params: Record<string, string>;
  operation: string;
  idempotent: boolean;
}

/** A container's status as the network reports it: its code (FINISHED, ERROR, …) and its reason. */
export interface ContainerStatus {
  code: string;
  detail: string | null;
}

/** Where a post published without a receipt is looked for, and which listed post it is. */
export interface RecoverySearch {
  operation: string;
  path: string;
  params: Record<string, string>;
  /** Whether a listed post is this item's (its time is checked by the flow). */
  matches(post: Record<string, any>): boolean;
  /** The listed post's time. */
  timestamp(post: Record<string, any>): unknown;
}

/** What a network of the flow says: its calls, its fields and its documented differences. */
export interface ContainerNetwork {
  /** "Instagram", "Threads": in messages. */
  name: string;
  /** What holds the posts, in messages: "account", "profile". */
  owner: string;
  call(destination: DestinationRef, request: ContainerCall): Promise<MetaAnswer>;
  /** Where containers are created (`<user>/media`, `<user>/threads`) and published. */
  create: { operation: string; path(destination: DestinationRef): string };
  publish: { operation: string; path(destination: DestinationRef): string };
  /** The status fields to ask for, and how the answer reads. */
  statusFields: string;
  readStatus(body: Record<string, any>): ContainerStatus;
  /** Creates the item's first containers: its own, or a carousel's items (`createContainer` each). */
  firstContainers(
    input: PublishItemInput,
    createContainer: (params: Record<string, string>) => Promise<string>,
  ): Promise<ContainerData>;
  /** What the CAROUSEL container carries besides its children (caption; text, reply and reply control). */
  carouselParams(input: PublishItemInput): Record<string, string>;
  /** Whether a carousel's items report PUBLISHED once the carousel is (Instagram does). */
  itemsReportPublished: boolean;
  /**
   * Whether a CAROUSEL container made in a status check is handed back to be stored before it is
   * published (Threads): a check that dies after publishing is run again, and only a stored container
   * id lets that run see it PUBLISHED and find the post instead of publishing a second carousel.
   */
  storeCarouselFirst: boolean;
  /** A container's ERROR as a refusal, with the network's reason and hints. */
  containerError(input: PublishItemInput, reason: string | null, mediaIndex: number | null): ProviderError;
  /** The account's public URL, the receipt URL when a post's permalink cannot be read. */
  profileUrl(destination: DestinationRef): string;
  recovery(input: PublishItemInput): RecoverySearch;
  /** Checks made before any container is created (Instagram's publishing limit). */
  beforeCreate?(destination: DestinationRef): Promise<void>;
}

/**
 * One status round: ready to publish, still processing, a CAROUSEL container just made (to be stored
 * before it is published), expired unpublished, or already published.
 */
type Round =
  | { kind: "ready"; container: string }
  | { kind: "created"; data: ContainerData }
  | { kind: "waiting"; data: ContainerData }
  | { kind: "expired"; reason: string }
  | { kind: "published"; container: string };

/** The container flow's publishing half, and its look-up of an item whose publish went unanswered. */
export type ContainerPublisher = PendingPublisher & Required<Pick<ProviderAdapter, "reconcileItem">>;

/** Builds the container flow of `network` over `deps` (fetch, clock, poll pace). */
export function createContainerPublisher(deps: AdapterDeps, network: ContainerNetwork): ContainerPublisher {
  const { name } = network;
  const flow: ContainerFlow = { deps, network };

  return {
    async publishItem(input) {
      const since = deps.clock.now();
      await network.beforeCreate?.(input.destination);
      // Every URL is signed before anything is sent: a failure here leaves nothing on the network.
      const data = await network.firstContainers(input, (params) => createContainer(flow, input, params));
      const status = await drive(flow, input, data, since, false);
      if (status.state === "published") return status.item;
      if (status.state === "gone")
        throw new ProviderError("transient", `${name}: ${status.reason}`, {
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
      const status = await drive(flow, item, pendingData(flow, data), since, true);
      if (status.state === "pending" && deps.clock.now() - since > META_CONTAINER_LIFETIME_MS)
        throw new ProviderError(
          "rejected",
          `${name} was still processing the media 24 hours later; nothing was published`,
          { operation: "GET /{container-id}" },
        );
      return status;
    },

    /**
     * An item whose publish call (or whose run) died unanswered before a container was stored: the
     * account's latest posts say. A container made then and never published is harmless: containers
     * publish nothing by themselves and expire in 24 hours.
     */
    reconcileItem: ({ item, since }) => reconcile(flow, item, since),
  };
}

/** What every step of the flow works over: Herald's provider deps and the network's own parts. */
interface ContainerFlow {
  deps: AdapterDeps;
  network: ContainerNetwork;
}

/** Creates one container; idempotent: a container publishes nothing and expires unused. */
async function createContainer(
  flow: ContainerFlow,
  input: PublishItemInput,
  params: Record<string, string>,
): Promise<string> {
  const { operation } = flow.network.create;
  const { body } = await flow.network.call(input.destination, {
    method: "POST",
    path: flow.network.create.path(input.destination),
    params,
    operation,
    idempotent: true,
  });
  return idOf(body, "id", operation, true);
}

async function statusOf(
  flow: ContainerFlow,
  destination: DestinationRef,
  container: string,
): Promise<ContainerStatus> {
  const { body } = await flow.network.call(destination, {
    method: "GET",
    path: encodeURIComponent(container),
    params: { fields: flow.network.statusFields },
    operation: "GET /{container-id}",
    idempotent: true,
  });
  return flow.network.readStatus(body);
}

/** One look at the item's containers; creates the CAROUSEL container once its items are FINISHED. */
async function round(
  flow: ContainerFlow,
  input: PublishItemInput,
  data: ContainerData,
  inCheck: boolean,
): Promise<Round> {
  let container = data.container;
  if (container === null) {
    const statuses = [];
    for (const child of data.children) statuses.push(await statusOf(flow, input.destination, child));
    statuses.forEach((s, i) => {
      if (s.code === "ERROR") throw flow.network.containerError(input, s.detail, i);
    });
    // Items of a carousel an earlier run published: that run's post is looked up, never re-sent.
    const published = flow.network.itemsReportPublished
      ? statuses.findIndex((s) => s.code === "PUBLISHED")
      : -1;
    if (published >= 0) return { kind: "published", container: data.children[published]! };
    if (statuses.some((s) => s.code === "EXPIRED"))
      return { kind: "expired", reason: "a carousel item's container expired before it was published" };
    if (!statuses.every((s) => s.code === "FINISHED")) return { kind: "waiting", data };
    container = await createContainer(flow, input, {
      media_type: "CAROUSEL",
      children: data.children.join(","),
      ...flow.network.carouselParams(input),
    });
    if (inCheck && flow.network.storeCarouselFirst) return { kind: "created", data: { ...data, container } };
  }
  const { code, detail } = await statusOf(flow, input.destination, container);
  if (code === "FINISHED") return { kind: "ready", container };
  if (code === "PUBLISHED") return { kind: "published", container };
  if (code === "ERROR") throw flow.network.containerError(input, detail, null);
  if (code === "EXPIRED")
    return {
      kind: "expired",
      reason: "the container expired before it was published (nothing was published)",
    };
  return { kind: "waiting", data: { ...data, container } };
}

/**
 * Rounds until the container is ready (then publishes it) or the inline polls are used up. A publish
 * Meta answers "not ready, please wait" (9007/2207027, even after the status read FINISHED) is waited
 * out: the status is read again and the same container published when FINISHED, at most
 * META_NOT_READY_WAITS times a run. Then the item waits as pending with its container stored (a first
 * run), or the check fails `transient` so the engine retries it later with the same stored container:
 * never a second container, never a second publish.
 */
async function drive(
  flow: ContainerFlow,
  input: PublishItemInput,
  start: ContainerData,
  since: number,
  inCheck: boolean,
): Promise<PendingStatus> {
  const pollIntervalMs = flow.deps.pollIntervalMs ?? 1000;
  const maxPolls = Math.max(1, flow.deps.maxPolls ?? 5);
  let data = start;
  let notReadyWaits = 0;
  for (let poll = 1; ; poll++) {
    const step = await round(flow, input, data, inCheck);
    if (step.kind === "created")
      return { state: "pending", checkAgainAt: flow.deps.clock.now(), data: step.data };
    if (step.kind === "published")
      return { state: "published", item: await recover(flow, input, step.container, since) };
    if (step.kind === "expired") return { state: "gone", reason: step.reason };
    if (step.kind === "ready") {
      const published = await publishUnlessNotReady(flow, input, step.container, since);
      if (!(published instanceof ProviderError)) return { state: "published", item: published };
      data = { ...data, container: step.container };
      if (++notReadyWaits > META_NOT_READY_WAITS) {
        // A check whose container is stored fails for the engine to retry; otherwise it is stored first.
        if (inCheck && start.container === step.container) throw stillNotReady(flow, published);
        const checkAgainAt = flow.deps.clock.now() + META_CONTAINER_CHECK_MS;
        return { state: "pending", checkAgainAt, data };
      }
    } else {
      data = step.data;
      if (poll >= maxPolls)
        return { state: "pending", checkAgainAt: flow.deps.clock.now() + META_CONTAINER_CHECK_MS, data };
    }
    await sleep(pollIntervalMs);
  }
}

/** The publish call, or Meta's "not ready, please wait" refusal of it (nothing was published). */
async function publishUnlessNotReady(
  flow: ContainerFlow,
  input: PublishItemInput,
  container: string,
  since: number,
): Promise<PublishedItem | ProviderError> {
  try {
    return await publish(flow, input, container, since);
  } catch (error) {
    if (error instanceof ProviderError && isMetaWait(error)) return error;
    throw error;
  }
}

/** The check's failure once Meta still says "not ready" after the waits: retried, nothing was published. */
function stillNotReady(flow: ContainerFlow, refusal: ProviderError): ProviderError {
  return new ProviderError(
    "transient",
    `${flow.network.name} still answers that the media is not ready for publishing after ` +
      `${META_NOT_READY_WAITS} waits (${refusal.message}); nothing was published, and Herald will publish ` +
      "the same container when it tries again",
    {
      operation: refusal.operation,
      statusCode: refusal.statusCode,
      errorCode: refusal.errorCode,
      subcode: refusal.subcode,
      requestId: refusal.requestId,
    },
  );
}

/**
 * The publish call, once (not idempotent: an unanswered publish is `outcome_unknown`). A refusal of a
 * container that turns out PUBLISHED is an earlier publish: its post is looked up, never re-sent.
 * Nothing after a successful publish throws anything but `outcome_unknown`.
 */
async function publish(
  flow: ContainerFlow,
  input: PublishItemInput,
  container: string,
  since: number,
): Promise<PublishedItem> {
  const { operation } = flow.network.publish;
  let answer: MetaAnswer;
  try {
    answer = await flow.network.call(input.destination, {
      method: "POST",
      path: flow.network.publish.path(input.destination),
      params: { creation_id: container },
      operation,
      idempotent: false,
    });
  } catch (error) {
    if (
      error instanceof ProviderError &&
      error.kind === "rejected" &&
      (await isPublished(flow, input.destination, container))
    )
      return recover(flow, input, container, since);
    throw error;
  }
  const id = answer.body.id;
  if (typeof id !== "string" && typeof id !== "number") return recover(flow, input, container, since);
  const mediaId = String(id);
  return {
    providerObjectId: mediaId,
    url: await permalinkOf(flow, input.destination, mediaId),
    extra: { id: mediaId, container },
    provider: metaProvider(operation, answer),
  };
}

async function isPublished(
  flow: ContainerFlow,
  destination: DestinationRef,
  container: string,
): Promise<boolean> {
  try {
    return (await statusOf(flow, destination, container)).code === "PUBLISHED";
  } catch {
    return false;
  }
}

/** The post's permalink; never throws (the post exists): falls back to the account's URL. */
async function permalinkOf(
  flow: ContainerFlow,
  destination: DestinationRef,
  mediaId: string,
): Promise<string> {
  try {
    const { body } = await flow.network.call(destination, {
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
  return flow.network.profileUrl(destination);
}

/** What a look-up among the account's latest posts found: the matching posts, and how far back it read. */
interface LookUp {
  matches: Record<string, any>[];
  /** Posts read. */
  read: number;
  /** Whether the posts read reach back before since − slack (or are the account's whole history). */
  reachesBack: boolean;
}

/**
 * Reads the account's latest posts (newest first, at most META_RECOVERY_PAGES pages) until they reach
 * back before `since` − RECONCILE_SLACK_MS, and keeps those of this item (the network's search) dated
 * from then on. Throws the read's ProviderError.
 */
async function lookUp(flow: ContainerFlow, input: PublishItemInput, since: number): Promise<LookUp> {
  const search = flow.network.recovery(input);
  const from = listingFloor(since);
  const matches: Record<string, any>[] = [];
  let params = search.params;
  let read = 0;
  let oldest = Number.POSITIVE_INFINITY;
  for (let page = 1; ; page++) {
    const { body } = await flow.network.call(input.destination, {
      method: "GET",
      path: search.path,
      params,
      operation: search.operation,
      idempotent: true,
    });
    const posts: Record<string, any>[] = Array.isArray(body.data) ? body.data : [];
    read += posts.length;
    for (const post of posts) {
      const at = parseGraphTime(search.timestamp(post));
      if (Number.isFinite(at)) oldest = Math.min(oldest, at);
      if (at >= from && search.matches(post)) matches.push(post);
    }
    const after = body.paging?.cursors?.after;
    const more = typeof body.paging?.next === "string" && typeof after === "string" && after !== "";
    // No next page: the account's whole history was read.
    if (!more || oldest < from) return { matches, read, reachesBack: true };
    if (page >= META_RECOVERY_PAGES) return { matches, read, reachesBack: false };
    params = { ...search.params, after };
  }
}

/** A listed post as the item's receipt (its permalink, or the account's URL). */
function foundPost(
  flow: ContainerFlow,
  input: PublishItemInput,
  post: Record<string, any>,
  extra: Record<string, unknown>,
): PublishedItem {
  const mediaId = String(post.id);
  return {
    providerObjectId: mediaId,
    url: typeof post.permalink === "string" ? post.permalink : flow.network.profileUrl(input.destination),
    extra: { id: mediaId, ...extra, recovered: true },
    provider: { operation: flow.network.recovery(input).operation, requestId: null, statusCode: 200 },
  };
}

/**
 * A container the network reports PUBLISHED although Herald holds no receipt (a run that died after
 * publishing): the post is looked up among the account's latest posts by the network's search and
 * its time. One match is the receipt; otherwise `outcome_unknown` settled for a person (the container
 * is published, so no look-up can make sending it again safe), and the container is never published again.
 */
async function recover(
  flow: ContainerFlow,
  input: PublishItemInput,
  container: string,
  since: number,
): Promise<PublishedItem> {
  const { owner } = flow.network;
  let reason: string;
  try {
    const { matches } = await lookUp(flow, input, since);
    if (matches.length === 1) return foundPost(flow, input, matches[0]!, { container });
    reason =
      matches.length === 0
        ? `none of the ${owner}'s latest posts matches it`
        : `${matches.length} of the ${owner}'s latest posts match it`;
  } catch (error) {
    reason = `the ${owner}'s latest posts could not be read (${error instanceof Error ? error.message : error})`;
  }
  throw new UnresolvedOutcome(
    `${flow.network.name} reports container ${container} as already published, but Herald cannot tell which post ` +
      `it became: ${reason}. Herald will not publish it again; check the ${owner}.`,
    { operation: flow.network.publish.operation },
  );
}

/**
 * What became of an item whose publish went out unanswered (RECONCILE rules): exactly one of the
 * account's posts since `since` − slack with its text (and, for a reply, its parent) is the receipt;
 * none in a listing that reaches back before then is `absent`; several, or a listing that stops
 * short, or one Meta refuses to Herald, is `unknown`. A read Meta may answer later (`transient`, an
 * expired token the engine renews) is thrown for the engine to ask again.
 */
async function reconcile(
  flow: ContainerFlow,
  input: PublishItemInput,
  since: number,
): Promise<ReconcileResult> {
  const { owner } = flow.network;
  let found: LookUp;
  try {
    found = await lookUp(flow, input, since);
  } catch (error) {
    // A refused read (a missing permission: code 10) is no reason to disconnect the account.
    if (!(error instanceof ProviderError) || error.kind === "transient" || error.kind === "auth_expired")
      throw error;
    return { state: "unknown", reason: `the ${owner}'s latest posts could not be read (${error.message})` };
  }
  const { matches, read, reachesBack } = found;
  if (matches.length === 1) return { state: "published", item: foundPost(flow, input, matches[0]!, {}) };
  if (matches.length > 1)
    return { state: "unknown", reason: `${matches.length} of the ${owner}'s latest posts match it` };
  if (!reachesBack)
    return {
      state: "unknown",
      reason: `none of the ${owner}'s latest ${read} posts matches it, and they do not reach back to when it was sent`,
    };
  return {
    state: "absent",
    reason: `none of the ${owner}'s posts since the call went out matches it (${read} read)`,
  };
}

/** The stored pending data, read defensively (it round-trips through the database as JSON). */
function pendingData(flow: ContainerFlow, data: Record<string, unknown>): ContainerData {
  const children = Array.isArray(data.children) ? data.children.map(String) : [];
  const container = typeof data.container === "string" ? data.container : null;
  if (container === null && children.length === 0)
    throw new ProviderError("outcome_unknown", `the pending ${flow.network.name} item has no container ids`, {
      operation: "checkPending",
    });
  return { children, container };
}
