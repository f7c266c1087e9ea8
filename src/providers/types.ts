import type { TSchema } from "@sinclair/typebox";
import type { Clock } from "../lib/clock.ts";

/** Every channel of the contract. */
export const CHANNELS = [
  "bluesky",
  "facebook",
  "instagram",
  "threads",
  "mastodon",
  "x",
  "linkedin",
  "tiktok",
  "youtube",
] as const;

/** A social network of the contract. */
export type Channel = (typeof CHANNELS)[number];

/**
 * Where a network lives when the operator says nothing (HERALD_<CH>_API_BASE, _AUTH_BASE and
 * _TOKEN_BASE override each): its REST API, its sign-in page and its token endpoint (default: the API).
 */
export interface NetworkOrigins {
  api: string;
  auth: string;
  token?: string;
}

/** A network's app credentials and origins as adapters use them; null credentials mean "not configured". */
export interface NetworkApp {
  clientId: string | null;
  clientSecret: string | null;
  /** Origin of the REST API (HERALD_<CH>_API_BASE). */
  apiBase: string;
  /** Origin of the sign-in page the user is sent to (HERALD_<CH>_AUTH_BASE). */
  authBase: string;
  /** Origin of the token endpoint (HERALD_<CH>_TOKEN_BASE, default the API base). */
  tokenBase: string;
  /**
   * Scopes to ask for instead of the adapter's own set (HERALD_<CH>_SCOPES, as the network writes
   * them), e.g. a LinkedIn app without the pages product; null: the adapter's set.
   */
  scopes: string | null;
  /**
   * The API version the adapter sends (HERALD_<CH>_API_VERSION over `NetworkDefinition.apiVersion`'s
   * default); null or absent for a network whose version Herald does not make a setting.
   */
  apiVersion?: string | null;
}

/**
 * How a provider call failed. The engine reacts to the kind, never to the network's name:
 * - `transient`: network error, 5xx, 429 (with `retryAt` when the network says when); retry with backoff.
 * - `auth_expired`: the access token expired; refresh once, then retry.
 * - `auth_revoked`: the grant is gone (revoked token, failed refresh); the destination needs reauthorization.
 * - `rejected`: the network refused the content; retrying the same content will not help.
 * - `outcome_unknown`: the request was sent but no answer came (timeout, connection cut) on a call
 *   that is not idempotent; the item may or may not exist.
 * - `blocked`: Herald's network guard refused the network's address (private or reserved); nothing
 *   was sent and retrying cannot help.
 * - `not_sent`: Herald failed before sending anything (unreadable media, an error in an adapter).
 * - `misconfigured`: the network refused how Herald is set up, not the content or the grant (LinkedIn's
 *   426 for a retired API version); nothing was created, and only the operator's setting can fix it.
 */
export type FailureKind =
  | "transient"
  | "auth_expired"
  | "auth_revoked"
  | "rejected"
  | "outcome_unknown"
  | "blocked"
  | "not_sent"
  | "misconfigured";

/** A typed provider failure; adapters throw only this. */
export class ProviderError extends Error {
  readonly kind: FailureKind;
  /** Name of the provider call, e.g. `createRecord`, `POST /api/v1/statuses`. */
  readonly operation: string;
  readonly statusCode: number | null;
  /** The network's own error code (`ExpiredToken`, `RateLimitExceeded`, …). */
  readonly errorCode: string | null;
  readonly subcode: string | null;
  /** The network's request id header, when it sends one. */
  readonly requestId: string | null;
  /** When the network says a retry may succeed (rate-limit reset), epoch ms. */
  readonly retryAt: number | null;
  /**
   * What a person does about a `rejected` failure when it is not editing the post (the post's
   * `last_error.user_action`), e.g. `check_account` for an account the network restricts; null: edit_post.
   */
  readonly userAction: string | null;

  constructor(
    kind: FailureKind,
    message: string,
    details: {
      operation: string;
      statusCode?: number | null;
      errorCode?: string | null;
      subcode?: string | null;
      requestId?: string | null;
      retryAt?: number | null;
      userAction?: string | null;
    },
  ) {
    super(message);
    this.kind = kind;
    this.operation = details.operation;
    this.statusCode = details.statusCode ?? null;
    this.errorCode = details.errorCode ?? null;
    this.subcode = details.subcode ?? null;
    this.requestId = details.requestId ?? null;
    this.retryAt = details.retryAt ?? null;
    this.userAction = details.userAction ?? null;
  }
}

/**
 * An `outcome_unknown` the network's own answers already failed to settle (a look-up that found
 * several matches or none it could trust): asking again cannot make sending the item safe, so the
 * engine hands it to a person at once instead of looking it up (`reconcileItem`) later.
 */
export class UnresolvedOutcome extends ProviderError {
  constructor(message: string, details: { operation: string }) {
    super("outcome_unknown", message, details);
  }
}

/** What every adapter is built with: no globals, no environment. */
export interface ProviderDeps {
  fetch: typeof fetch;
  clock: Clock;
  /**
   * Per-request timeout in ms (a timeout after the request was sent is `outcome_unknown` on non-idempotent
   * calls).
   */
  timeoutMs: number;
}

/**
 * What the registry builds every adapter with: the shared deps, each network's app settings
 * (HERALD_<CH>_CLIENT_ID/_SECRET/_API_BASE/_AUTH_BASE/_TOKEN_BASE) and the pace of status polls.
 */
export interface AdapterDeps extends ProviderDeps {
  /** App credentials and origins by channel (fixed-app networks read theirs). */
  apps: Partial<Record<string, NetworkApp>>;
  /**
   * Pause between two status polls made inside one call (media processing, a container that is
   * nearly done), ms; default 1000, tests ~10. Longer waits return a pending item instead.
   */
  pollIntervalMs?: number;
  /** Polls inside one call before giving up (or handing back a pending item); default 5. */
  maxPolls?: number;
}

/**
 * Adapter-specific credentials, stored encrypted on the destination (JSON-serialisable). By
 * convention `expiresAt` (epoch ms) is when the access token expires: the engine renews credentials
 * due within a minute before publishing, and the credentials job renews them `refreshAheadMs` early.
 * `renewable: false` says no renewal is possible (a LinkedIn self-serve app): the job then marks the
 * destination for reauthorization when the token expires instead of trying. `renewBy` (epoch ms) is
 * when the job must renew whatever `refreshAheadMs` says: a refresh token that dies unused (TikTok).
 */
export type Credentials = Record<string, unknown>;

/** A connected account as an adapter sees it. */
export interface DestinationRef {
  /** https origin of the Mastodon instance or Bluesky PDS. */
  origin: string;
  /** The account's id on the network (Mastodon account id, Bluesky DID). */
  externalId: string;
  /** The account's handle / username (for URLs). */
  handle: string;
  credentials: Credentials;
  /** Limits read from the network at connection time (e.g. Mastodon's max_characters). */
  limits: ChannelLimits;
}

/** Per-destination publishing limits. */
export interface ChannelLimits {
  maxCharacters: number;
  maxImages: number;
  maxVideos: number;
  /** Largest image an adapter accepts, in bytes (Bluesky: 1,000,000 enforced by Herald). */
  maxImageBytes: number;
}

/** One media file attached to a body item (bytes are read only when publishing). */
export interface MediaItem {
  assetId: string;
  contentType: string;
  byteSize: number;
  width: number | null;
  height: number | null;
  /** A video's duration in whole seconds, as Herald read it from the file (null: not a video, or unknown). */
  durationSec?: number | null;
  altText: string | null;
  read(): Promise<Uint8Array>;
  /**
   * A signed, expiring public download URL of the asset (`<HERALD_BASE_URL>/downloads/…`), for
   * networks that pull media by URL (Threads, Instagram). Valid for at least an hour.
   */
  publicUrl(): string;
}

/** What the network returned for one published item; `extra` carries what replies need (Bluesky cid). */
export interface PublishedItem {
  providerObjectId: string;
  url: string;
  extra: Record<string, unknown>;
  /** Details for the attempt log. */
  provider: { operation: string; requestId: string | null; statusCode: number | null };
}

/** One body item to publish. */
export interface PublishItemInput {
  destination: DestinationRef;
  text: string;
  /** The post's headline: the first line of its first item, ≤ 100 characters (a video's title). */
  headline: string;
  itemIndex: number;
  media: MediaItem[];
  /** `destination_options[channel]` of the post, as given. */
  options: Record<string, unknown>;
  /** The first item of the thread and the previous item; null for the first item. */
  root: PublishedItem | null;
  parent: PublishedItem | null;
  /** Stable for this post and item across retries (Mastodon sends it as Idempotency-Key). */
  idempotencyKey: string;
}

/**
 * An item the network accepted but has not published yet (a container still processing): the engine
 * stores `data` with the post, moves it to `awaiting-provider`, and calls `checkPending` at
 * `checkAgainAt`. `data` is stored sealed with the server's key (an upload URL may be in it), but
 * tokens still stay out: they live, and are renewed, with the destination.
 */
export interface PendingItem {
  pending: true;
  /** What `checkPending` needs to continue (container ids, …); JSON-serialisable. */
  data: Record<string, unknown>;
  /** When to check again, epoch ms. */
  checkAgainAt: number;
  provider: { operation: string; requestId: string | null; statusCode: number | null };
}

/** A first comment to publish under a post's first item. */
export interface FirstCommentInput {
  destination: DestinationRef;
  /** The receipt of the post's first item (the object the comment goes under). */
  post: PublishedItem;
  text: string;
}

/** What publishing one item gives: published at once, or accepted and still processing. */
export type PublishOutcome = PublishedItem | PendingItem;

/** Whether a publish outcome is still pending on the network. */
export function isPending(outcome: PublishOutcome): outcome is PendingItem {
  return (outcome as PendingItem).pending === true;
}

/** The seven metrics of the contract, in its order. */
export const METRICS = [
  "views",
  "impressions",
  "comments",
  "reactions",
  "shares",
  "saves",
  "link_clicks",
] as const;

/** One of the contract's metrics. */
export type MetricName = (typeof METRICS)[number];

/** A published item whose numbers are asked for (the receipt of a post's first item). */
export interface MetricsTarget {
  providerObjectId: string;
  url: string;
  extra: Record<string, unknown>;
  publishedAt: number;
}

/**
 * What the network says of one item: its numbers (only the metrics it offers for this item; the
 * rest count as 0 and not as fetched), no metrics at all for this kind of post (`unsupported`), or a
 * failure of this item alone (`missing`: deleted on the network or not visible to the account).
 */
export type MetricsResult =
  | {
      providerObjectId: string;
      kind: "metrics";
      values: Partial<Record<MetricName, number>>;
      /** When the network computed them (epoch ms), when it says. */
      providerAsOf: number | null;
    }
  | { providerObjectId: string; kind: "unsupported"; reason: string }
  | { providerObjectId: string; kind: "missing"; reason: string };

/**
 * One count of a body item's text: `used` of `limit`, in characters as the network counts them (its
 * own rule: graphemes, code points, URLs as 23, weighted, UTF-16 units) or in UTF-8 bytes.
 */
export interface TextMeasure {
  used: number;
  limit: number;
  unit: "characters" | "bytes";
}

/** A problem with an item found before publishing (becomes a 422 `errors[]` entry). */
export interface ItemProblem {
  /** Pointer relative to the item, e.g. "" (the text), "/media/2". */
  pointer: string;
  detail: string;
  /**
   * Set when the problem is one of the post's options rather than the item: a pointer relative to
   * `destination_options.<channel>` (e.g. "/privacy_level"), used instead of `pointer`.
   */
  option?: string;
}

/** Result of connecting an account. */
export interface ConnectedAccount {
  externalId: string;
  handle: string;
  displayName: string;
  profileImageUrl: string | null;
  credentials: Credentials;
  limits: ChannelLimits;
}

/**
 * What Herald knows of a network without talking to it: its options, its content rules, its caps.
 * Every channel has these; a network whose publishing adapter has not landed yet has only these.
 */
export interface NetworkRules {
  /** The contract's channel name (a network registered beside the nine has its own). */
  channel: string;
  /** Name shown in messages ("Bluesky"). */
  displayName: string;
  /**
   * The limits an account of this network has unless it says otherwise when connected (a Mastodon
   * instance tells its own): what a draft that names only the channel is checked against.
   */
  defaultLimits: ChannelLimits;
  /** TypeBox schema of `destination_options[channel]` (becomes part of the OpenAPI document), or null. */
  optionsSchema: TSchema | null;
  /**
   * Checks options against the post beyond their schema (drafts too): pointers are relative to
   * `destination_options/<channel>`. `assetIds` are the assets attached to the post.
   */
  checkOptions?(input: { options: Record<string, unknown>; assetIds: string[] }): ItemProblem[];
  /** Checks one body item against the destination's limits; no network calls. */
  checkItem?(input: CheckItemInput): ItemProblem[];
  /**
   * The item's text length by each count `checkItem` refuses over (Bluesky: graphemes and UTF-8
   * bytes), with the limit it applies: what a composer's counters show, so they never disagree.
   */
  measureText?(input: CheckItemInput): TextMeasure[];
  /**
   * Checks `destination_options.<channel>.first_comment` against the network's comment rules (length,
   * hashtags, mentions): the problems' details, empty when the network takes it. Present only on the
   * networks that publish a first comment (`publishFirstComment`).
   */
  checkFirstComment?(text: string): string[];
  /** Whether later body items publish as replies (threads). */
  supportsThreads: boolean;
  /**
   * The network flags a post repeating an earlier one as a duplicate (or spam), so recycling
   * evergreen posts is refused there (422 at `/posts/<i>/recycle`). Absent: repeats are allowed.
   */
  refusesRepeats?: true;
  /** Posts per destination per rolling 24 h the network documents, or null (HERALD_DAILY_CAP_* overrides). */
  dailyCap: number | null;
  /** Posts per workspace per calendar month the contract allows on this network (`x_usage`), or null. */
  monthlyPostLimit: number | null;
}

/** A media item as checks see it: no bytes, no URL. */
export type MediaFacts = Omit<MediaItem, "read" | "publicUrl">;

/** What `checkItem` gets: one body item with its media (no bytes) and the post's options. */
export interface CheckItemInput {
  text: string;
  media: MediaFacts[];
  options: Record<string, unknown>;
  limits: ChannelLimits;
  /**
   * Whether Herald can give the network public URLs of its media: HERALD_BASE_URL is a public
   * https origin (or the test-only private-network allowance is on). Pull-by-URL networks refuse
   * media otherwise.
   */
  publicMediaUrls: boolean;
  /** The destination's account id at its network (a LinkedIn page is `urn:li:organization:…`). */
  externalId: string;
}

/**
 * How a person names the server an account lives on, in the connect form: the field's label
 * ("Instance"), the same words inside a sentence ("instance"), and help.
 */
export interface OriginField {
  label: string;
  inSentence: string;
  hint: string;
}

/**
 * How a network is connected: handle + app password (with help for the form's handle and password
 * fields, and an optional origin for an account hosted elsewhere), or OAuth: a per-instance app (the
 * form asks for the instance) or a fixed app (one button).
 */
export type ConnectionFlow =
  | {
      kind: "password";
      defaultOrigin: string;
      form: { handleHint: string; passwordHint: string; origin: OriginField };
    }
  | { kind: "oauth"; registration: "per-instance"; form: { origin: OriginField } }
  | { kind: "oauth"; registration: "fixed-app" };

/**
 * What the status check of a pending item says: still processing (check again at `checkAgainAt`,
 * with `data` replacing the stored data when given), published (the receipt), or `gone`: the
 * network dropped it without publishing (an expired container), so the item is sent again.
 */
export type PendingStatus =
  | { state: "pending"; checkAgainAt: number; data?: Record<string, unknown> }
  | { state: "published"; item: PublishedItem }
  | { state: "gone"; reason: string };

/**
 * What the network says of an item whose create call may have reached it without Herald hearing the
 * answer (a timeout, a cut connection, a process that died mid-call):
 * - `published`: it exists; the receipt (the engine stores it and never sends the item again);
 * - `absent`: the network's own answer shows it was not made, and sending it again cannot make a
 *   second one (Bluesky's record key is fixed; a listing that reaches back before `since` has no match);
 * - `unknown`: Herald cannot tell (the reason says why, for the person who must check).
 */
export type ReconcileResult =
  | { state: "published"; item: PublishedItem }
  | { state: "absent"; reason: string }
  | { state: "unknown"; reason: string };

/** The whole of a network: rules, connection, publishing, refresh. Methods take one object. */
export interface ProviderAdapter extends NetworkRules {
  connection: ConnectionFlow;
  /** True when the create call honours an idempotency key, so retrying an unknown outcome is safe. */
  idempotentCreate: boolean;
  checkItem(input: CheckItemInput): ItemProblem[];
  /**
   * Publishes one body item (uploading its media first), or hands back a pending item when the
   * network is still processing it. Throws ProviderError. Once a call that creates the post
   * succeeded, nothing after it may throw (the engine would send the item again).
   */
  publishItem(input: PublishItemInput): Promise<PublishOutcome>;
  /**
   * For networks that publish asynchronously (containers): finishes a pending item when the network
   * is done processing it. Once a publish went through, this reports it done and never publishes
   * again; a publish whose answer was lost is `outcome_unknown`. `since`: when the item went pending.
   */
  checkPending?(input: {
    destination: DestinationRef;
    item: PublishItemInput;
    data: Record<string, unknown>;
    since: number;
  }): Promise<PendingStatus>;
  /**
   * True when a status check interrupted at any point (the process died) can be run again without
   * publishing twice: the network refuses to publish a container twice, or the check only reads.
   * Recovery then resumes the checks instead of asking the user (false: X and LinkedIn create the
   * post inside the check).
   */
  pendingChecksRepeatable: boolean;
  /**
   * Finds out what became of an item whose create call may have gone out unanswered (see
   * `ReconcileResult`); `since` is when that call was started (or earlier), epoch ms. Only reads: it
   * never creates anything. Throws ProviderError when the look-up itself fails (`transient`: the
   * engine asks again later). Absent on a network that gives Herald no way to tell (the post then
   * needs attention) or whose creates are idempotent (`idempotentCreate`: it is simply sent again).
   */
  reconcileItem?(input: { item: PublishItemInput; since: number }): Promise<ReconcileResult>;
  /**
   * Publishes the post's first comment under its first item (`post`, that item's receipt). Throws
   * ProviderError like `publishItem`; once the comment exists nothing after may throw.
   */
  publishFirstComment?(input: FirstCommentInput): Promise<PublishedItem>;
  /**
   * What became of a first comment whose create call went out unanswered (`since`: when it started):
   * the comments under the post read back, the account's own with this text. Only reads.
   */
  findFirstComment?(input: FirstCommentInput & { since: number }): Promise<ReconcileResult>;
  /**
   * A setting of this network the network itself refused since the start (LinkedIn: the API version
   * it answered 426 to), as the destinations' `unavailable_reason`; null while none was refused.
   * Settings are read at start, so a restart with a fixed setting clears it.
   */
  configurationProblem?(): string | null;
  /**
   * How long before `credentials.expiresAt` the credentials job renews a destination's token (a
   * token that dies unused, like Threads' 60-day one); null when renewing at publish time is enough.
   */
  refreshAheadMs: number | null;
  /**
   * Reads the numbers of published items of one destination, at most `metricsBatchSize` a call (one
   * result per target, any order). Throws ProviderError when the whole call fails (rate limit: with
   * `retryAt`). Absent on a network Herald reads no numbers from.
   */
  fetchMetrics?(input: { destination: DestinationRef; targets: MetricsTarget[] }): Promise<MetricsResult[]>;
  /** Targets one `fetchMetrics` call takes (X: 100 ids a call; 1 where the network reads one at a time). */
  metricsBatchSize?: number;
  /**
   * Renews expired credentials; returns the new ones (to be stored before any other call) or throws
   * ProviderError `auth_revoked` when the grant is gone. Networks whose tokens never expire throw `auth_revoked`.
   */
  refreshCredentials(input: { destination: DestinationRef }): Promise<Credentials>;
}

/** OAuth connection steps (per-instance registration like Mastodon, or a fixed app with PKCE). */
export interface OAuthConnector {
  /** Registers Herald as an app on the instance (per-instance registration only). */
  registerApp?(input: {
    origin: string;
    redirectUri: string;
    clientName: string;
    website: string;
  }): Promise<{ clientId: string; clientSecret: string }>;
  /**
   * Whether a registered app still exists on the instance (false when the instance forgot it, e.g.
   * after a reset); per-instance registration only.
   */
  appIsKnown?(input: { origin: string; clientId: string; clientSecret: string }): Promise<boolean>;
  /** The URL to send the user to. */
  authorizationUrl(input: {
    origin: string;
    clientId: string;
    redirectUri: string;
    state: string;
    codeChallenge: string;
  }): string;
  /** Exchanges the code and reads the connected accounts (one destination each: a user, or pages). */
  completeAuthorization(input: {
    origin: string;
    clientId: string;
    clientSecret: string;
    redirectUri: string;
    code: string;
    codeVerifier: string;
  }): Promise<ConnectedAccount[]>;
}

/** Bluesky's connection: handle + app password against a PDS origin. */
export interface PasswordConnector {
  connectWithPassword(input: {
    origin: string;
    identifier: string;
    password: string;
  }): Promise<ConnectedAccount>;
}

/** The publishing half of an adapter whose items may wait on the network (its `*-publish.ts` file). */
export type PendingPublisher = Required<Pick<ProviderAdapter, "publishItem" | "checkPending">>;

/** An adapter whose items are published when its create call answers (never pending). */
export type Immediate<A extends ProviderAdapter> = Omit<A, "publishItem"> & {
  publishItem(input: PublishItemInput): Promise<PublishedItem>;
};

/** An adapter connected through OAuth. */
export type OAuthAdapter = ProviderAdapter & OAuthConnector;
/** An adapter connected with a handle and an app password. */
export type PasswordAdapter = ProviderAdapter & PasswordConnector;
