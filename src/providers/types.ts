import type { Clock } from "../lib/clock.ts";

/** Every channel of the contract. */
export const CHANNELS = ["bluesky", "facebook", "instagram", "threads", "mastodon", "x", "linkedin", "tiktok", "youtube"] as const;

/** A social network Herald can publish to. */
export type Channel = (typeof CHANNELS)[number];

/**
 * How a provider call failed. The engine reacts to the kind, never to the network's name:
 * - `transient`: network error, 5xx, 429 (with `retryAt` when the network says when); retry with backoff.
 * - `auth_expired`: the access token expired; refresh once, then retry.
 * - `auth_revoked`: the grant is gone (revoked token, failed refresh); the destination needs reauthorization.
 * - `rejected`: the network refused the content; retrying the same content will not help.
 * - `outcome_unknown`: the request was sent but no answer came (timeout, connection cut) on a call
 *   that is not idempotent; the item may or may not exist.
 */
export type FailureKind = "transient" | "auth_expired" | "auth_revoked" | "rejected" | "outcome_unknown";

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

  constructor(kind: FailureKind, message: string, details: { operation: string; statusCode?: number | null; errorCode?: string | null; subcode?: string | null; requestId?: string | null; retryAt?: number | null }) {
    super(message);
    this.kind = kind;
    this.operation = details.operation;
    this.statusCode = details.statusCode ?? null;
    this.errorCode = details.errorCode ?? null;
    this.subcode = details.subcode ?? null;
    this.requestId = details.requestId ?? null;
    this.retryAt = details.retryAt ?? null;
  }
}

/** What every adapter is built with: no globals, no environment. */
export interface ProviderDeps {
  fetch: typeof fetch;
  clock: Clock;
  /** Per-request timeout in ms (a timeout after the request was sent is `outcome_unknown` on non-idempotent calls). */
  timeoutMs: number;
}

/** Adapter-specific credentials, stored encrypted on the destination (JSON-serialisable). */
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
  altText: string | null;
  read(): Promise<Uint8Array>;
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

/** A problem with an item found before publishing (becomes a 422 `errors[]` entry). */
export interface ItemProblem {
  /** Pointer relative to the item, e.g. "" (the text), "/media/2". */
  pointer: string;
  detail: string;
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

/** The one interface every network implements. */
export interface ProviderAdapter {
  channel: Channel;
  /** True when the create call honours an idempotency key, so retrying an unknown outcome is safe. */
  idempotentCreate: boolean;
  /** Whether later body items publish as replies (threads). */
  supportsThreads: boolean;
  /** Checks one body item against the destination's limits; no network calls. */
  checkItem(input: { text: string; media: Omit<MediaItem, "read">[]; options: Record<string, unknown>; limits: ChannelLimits }): ItemProblem[];
  /** Publishes one body item (uploading its media first). Throws ProviderError. */
  publishItem(input: PublishItemInput): Promise<PublishedItem>;
  /**
   * Renews expired credentials; returns the new ones (to be stored before any other call) or throws
   * ProviderError `auth_revoked` when the grant is gone. Networks whose tokens never expire throw `auth_revoked`.
   */
  refreshCredentials(input: { destination: DestinationRef }): Promise<Credentials>;
}

/** Mastodon's OAuth connection steps (per-instance app registration, code flow with PKCE). */
export interface OAuthConnector {
  /** Registers Herald as an app on the instance (cache the result per instance + redirect URI). */
  registerApp(input: { origin: string; redirectUri: string; clientName: string; website: string }): Promise<{ clientId: string; clientSecret: string }>;
  /** The URL to send the user to. */
  authorizationUrl(input: { origin: string; clientId: string; redirectUri: string; state: string; codeChallenge: string }): string;
  /** Exchanges the code and reads the account and the instance limits. */
  completeAuthorization(input: { origin: string; clientId: string; clientSecret: string; redirectUri: string; code: string; codeVerifier: string }): Promise<ConnectedAccount>;
}

/** Bluesky's connection: handle + app password against a PDS origin. */
export interface PasswordConnector {
  connectWithPassword(input: { origin: string; identifier: string; password: string }): Promise<ConnectedAccount>;
}
