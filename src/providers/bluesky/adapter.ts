import type { NetworkDefinition } from "../registry.ts";
import { Type } from "@sinclair/typebox";
import { createBlueskyPublisher } from "./publish.ts";
import { reconcileBlueskyItem } from "./reconcile.ts";
import { base, blueskyRetryAt, xrpcCaller, xrpcError } from "./xrpc.ts";
import { expectJson, providerFetch } from "../http.ts";
import { countGraphemes, unattachedAltTextProblems, utf8Length } from "../text.ts";
import {
  ProviderError,
  type ChannelLimits,
  type ConnectedAccount,
  type Credentials,
  type Immediate,
  type ItemProblem,
  type MediaFacts,
  type MetricsResult,
  type NetworkRules,
  type PasswordAdapter,
  type ProviderDeps,
} from "../types.ts";

/** Bluesky's limits; images are held to 1,000,000 bytes by Herald (the PDS does not check blob size). */
export const BLUESKY_LIMITS: ChannelLimits = {
  maxCharacters: 300,
  maxImages: 4,
  maxVideos: 1,
  maxImageBytes: 1_000_000,
};

/** Longest post text in UTF-8 bytes (the lexicon's `maxLength`, beside 300 graphemes). */
export const BLUESKY_MAX_TEXT_BYTES = 3000;

/**
 * What a Bluesky destination stores: the session pair and the app password that can recover a dead session.
 */
export interface BlueskyCredentials extends Credentials {
  accessJwt: string;
  refreshJwt: string;
  did: string;
  handle: string;
  appPassword: string;
}

/** Self-labels Bluesky defines for adult content. */
const BLUESKY_LABELS = ["sexual", "nudity", "porn", "graphic-media"];

/** Bluesky's rules: `destination_options.bluesky`, text and media limits, caps. */
export const BLUESKY_RULES: NetworkRules = {
  channel: "bluesky",
  displayName: "Bluesky",
  defaultLimits: BLUESKY_LIMITS,
  optionsSchema: Type.Object(
    {
      languages: Type.Optional(
        Type.Array(
          Type.String({ minLength: 2, maxLength: 35, pattern: "^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$" }),
          { maxItems: 3, title: "Languages", description: "Up to three codes, comma-separated (en, pt-BR)." },
        ),
      ),
      // The labels are checked by checkOptions (its message names them), so the schema only lists them.
      content_labels: Type.Optional(
        Type.Array(Type.String({ examples: BLUESKY_LABELS }), { maxItems: 4, title: "Content labels" }),
      ),
      alt_text_by_asset_id: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 2000 }))),
    },
    { additionalProperties: false, description: "Bluesky requires alt text for every image." },
  ),
  checkOptions: ({ options, assetIds }) => {
    const labels = (options.content_labels as string[] | undefined) ?? [];
    const problems = labels.flatMap((label, i) =>
      BLUESKY_LABELS.includes(label)
        ? []
        : [{ pointer: `/content_labels/${i}`, detail: `must be one of ${BLUESKY_LABELS.join(", ")}` }],
    );
    return [...problems, ...unattachedAltTextProblems(options, assetIds)];
  },
  checkItem: (input) => checkBlueskyItem(input),
  measureText: ({ text, limits }) => [
    { used: countGraphemes(text), limit: limits.maxCharacters, unit: "characters" },
    { used: utf8Length(text), limit: BLUESKY_MAX_TEXT_BYTES, unit: "bytes" },
  ],
  supportsThreads: true,
  // 35,000 write points a day at 3 per record.
  dailyCap: 11_666,
  monthlyPostLimit: null,
};

/** The XRPC caller over the adapter's deps (xrpc.ts). */
type Xrpc = ReturnType<typeof xrpcCaller>;

/**
 * The Bluesky adapter: app-password sessions (refreshed, never a login per post), createRecord with facets,
 * images and replies.
 */
export function createBlueskyAdapter(deps: ProviderDeps): Immediate<PasswordAdapter> {
  const xrpc = xrpcCaller(deps);

  return {
    ...BLUESKY_RULES,
    checkItem: checkBlueskyItem,
    connection: {
      kind: "password",
      defaultOrigin: "https://bsky.social",
      form: {
        handleHint: "Like alice.bsky.social.",
        passwordHint: "Create one in Bluesky under Settings, Privacy and security, App passwords.",
        origin: {
          label: "PDS origin",
          inSentence: "PDS origin",
          hint: "Only for an account hosted elsewhere than bsky.social, like https://pds.example.com.",
        },
      },
    },
    idempotentCreate: false,
    pendingChecksRepeatable: false,
    refreshAheadMs: null,
    ...createBlueskyPublisher(deps),
    reconcileItem: (input) => reconcileBlueskyItem(deps, input),

    metricsBatchSize: 25,

    /** app.bsky.feed.getPosts (≤ 25 uris; the PDS proxies it to the AppView): counts of each post. */
    fetchMetrics: (input) => fetchBlueskyMetrics(deps, input),

    connectWithPassword: (input) => connectBlueskyAccount(xrpc, input),

    /**
     * refreshSession with the refresh token (it rotates: store the returned pair); when the refresh token
     * is dead, one createSession with the stored app password; when that is refused, `auth_revoked`.
     */
    refreshCredentials: (input) => renewBlueskySession(xrpc, input),
  };
}

/** createSession; a 401 (wrong or revoked app password, 2FA required) means the grant is gone. */
async function createSession(
  xrpc: Xrpc,
  input: {
    origin: string;
    identifier: string;
    password: string;
  },
): Promise<Record<string, any>> {
  try {
    return await xrpc({
      origin: input.origin,
      nsid: "com.atproto.server.createSession",
      init: {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ identifier: input.identifier, password: input.password }),
      },
      idempotent: true, // a second session is harmless
    });
  } catch (error) {
    if (error instanceof ProviderError && (error.kind === "auth_expired" || error.statusCode === 401)) {
      const { operation, statusCode, errorCode, requestId } = error;
      throw new ProviderError("auth_revoked", error.message, {
        operation,
        statusCode,
        errorCode,
        requestId,
      });
    }
    throw error;
  }
}

/**
 * Bluesky's rules for one post: ≤300 graphemes and ≤3000 UTF-8 bytes; up to four images or exactly one
 * MP4 video, never both; every image has alt text and fits `limits.maxImageBytes`.
 */
export function checkBlueskyItem(input: {
  text: string;
  media: MediaFacts[];
  options: Record<string, unknown>;
  limits: ChannelLimits;
}): ItemProblem[] {
  const { text, media, limits } = input;
  const problems: ItemProblem[] = [];
  const graphemes = countGraphemes(text);
  if (graphemes > limits.maxCharacters)
    problems.push({
      pointer: "",
      detail: `text is ${graphemes} characters; Bluesky allows ${limits.maxCharacters}`,
    });
  const bytes = utf8Length(text);
  if (bytes > BLUESKY_MAX_TEXT_BYTES)
    problems.push({
      pointer: "",
      detail: `text is ${bytes} bytes in UTF-8; Bluesky allows ${BLUESKY_MAX_TEXT_BYTES}`,
    });
  const altById = (input.options.alt_text_by_asset_id ?? {}) as Record<string, unknown>;
  const videos = media.filter((m) => m.contentType.startsWith("video/")).length;
  const images = media.length - videos;
  if (videos > 0 && images > 0)
    problems.push({
      pointer: "/media",
      detail: "a Bluesky post takes up to four images or one video, not both",
    });
  if (videos > limits.maxVideos)
    problems.push({ pointer: "/media", detail: `a Bluesky post takes at most ${limits.maxVideos} video` });
  let imageIndex = 0;
  media.forEach((m, i) => {
    const pointer = `/media/${i}`;
    if (m.contentType.startsWith("video/")) {
      if (m.contentType !== "video/mp4")
        problems.push({ pointer, detail: `videos must be MP4 (video/mp4), not ${m.contentType}` });
      return;
    }
    if (!m.contentType.startsWith("image/"))
      return void problems.push({ pointer, detail: `${m.contentType} cannot be attached on Bluesky` });
    if (imageIndex++ === limits.maxImages)
      problems.push({ pointer, detail: `a Bluesky post takes at most ${limits.maxImages} images` });
    const alt = m.altText ?? altById[m.assetId];
    if (typeof alt !== "string" || alt.trim() === "")
      problems.push({
        pointer,
        detail: "every image needs alt text on Bluesky (destination_options.bluesky.alt_text_by_asset_id)",
      });
    if (m.byteSize > limits.maxImageBytes)
      problems.push({
        pointer,
        detail: `image is ${m.byteSize} bytes; Bluesky images may be at most ${limits.maxImageBytes}`,
      });
  });
  return problems;
}

/** Bluesky as the registry lists it. */
export const BLUESKY_NETWORK: NetworkDefinition = {
  rules: BLUESKY_RULES,
  // DESIGN.md "Network apps, API origins and storage engines": the documented origins.
  // PDSes are chosen per connection; this is only the default.
  origins: { api: "https://bsky.social", auth: "https://bsky.social" },
  create: createBlueskyAdapter,
};

async function fetchBlueskyMetrics(
  deps: ProviderDeps,
  { destination, targets }: Parameters<NonNullable<PasswordAdapter["fetchMetrics"]>>[0],
): Promise<MetricsResult[]> {
  const operation = "app.bsky.feed.getPosts";
  const query = new URLSearchParams();
  for (const target of targets) query.append("uris", target.providerObjectId);
  const response = await providerFetch({
    deps,
    operation,
    url: `${base(destination.origin)}/xrpc/${operation}?${query}`,
    init: { headers: { authorization: `Bearer ${String(destination.credentials.accessJwt ?? "")}` } },
    idempotent: true,
    retryAt: blueskyRetryAt,
  });
  if (!response.ok) throw await xrpcError({ operation, response });
  const body = await expectJson({ operation, response });
  const posts: Record<string, any>[] = Array.isArray(body.posts) ? body.posts : [];
  const count = (value: unknown) => (typeof value === "number" && value >= 0 ? value : 0);
  return targets.map(({ providerObjectId }): MetricsResult => {
    const post = posts.find((p) => p.uri === providerObjectId);
    if (!post)
      return { providerObjectId, kind: "missing", reason: "Bluesky did not return the post (deleted?)" };
    const values: MetricsResult & { kind: "metrics" } = {
      providerObjectId,
      kind: "metrics",
      values: {
        comments: count(post.replyCount),
        reactions: count(post.likeCount),
        shares: count(post.repostCount) + count(post.quoteCount),
      },
      providerAsOf: null,
    };
    // Bookmarks are counted by newer AppViews only.
    if (typeof post.bookmarkCount === "number") values.values.saves = count(post.bookmarkCount);
    return values;
  });
}

async function connectBlueskyAccount(
  xrpc: Xrpc,
  { origin, identifier, password }: Parameters<PasswordAdapter["connectWithPassword"]>[0],
): Promise<ConnectedAccount> {
  const session = await createSession(xrpc, { origin, identifier, password });
  const credentials: BlueskyCredentials = {
    accessJwt: session.accessJwt,
    refreshJwt: session.refreshJwt,
    did: session.did,
    handle: session.handle,
    appPassword: password,
  };
  return {
    externalId: session.did,
    handle: session.handle,
    displayName: session.handle,
    profileImageUrl: null,
    credentials,
    limits: { ...BLUESKY_LIMITS },
  };
}

async function renewBlueskySession(
  xrpc: Xrpc,
  { destination }: Parameters<PasswordAdapter["refreshCredentials"]>[0],
): Promise<Credentials> {
  const credentials = destination.credentials as Partial<BlueskyCredentials>;
  try {
    const session = await xrpc({
      origin: destination.origin,
      nsid: "com.atproto.server.refreshSession",
      init: { method: "POST", headers: { authorization: `Bearer ${credentials.refreshJwt ?? ""}` } },
      idempotent: true, // the PDS answers a repeated refresh within its grace period
    });
    return {
      ...credentials,
      accessJwt: session.accessJwt,
      refreshJwt: session.refreshJwt,
      did: session.did ?? credentials.did,
      handle: session.handle ?? credentials.handle,
    };
  } catch (error) {
    if (!(error instanceof ProviderError) || (error.kind !== "auth_expired" && error.kind !== "rejected"))
      throw error;
  }
  if (!credentials.appPassword)
    throw new ProviderError("auth_revoked", "the Bluesky session ended and no app password is stored", {
      operation: "refreshCredentials",
    });
  const session = await createSession(xrpc, {
    origin: destination.origin,
    identifier: credentials.did ?? destination.externalId,
    password: credentials.appPassword,
  });
  return {
    ...credentials,
    accessJwt: session.accessJwt,
    refreshJwt: session.refreshJwt,
    did: session.did,
    handle: session.handle,
  };
}
