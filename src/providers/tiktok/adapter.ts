// The TikTok adapter (Content Posting API v2, providers.md §8): Login Kit OAuth v2 for Herald's web
// app (`client_key`, no PKCE), short-lived access tokens renewed with rotating refresh tokens, and
// direct posts of one video (chunked FILE_UPLOAD) or photos (PULL_FROM_URL) through
// publish.ts, with the rules of rules.ts; published posts' numbers through metrics.ts.
import { appForRenewal, storedRefreshToken } from "../refresh-grant.ts";
import type { NetworkDefinition } from "../registry.ts";
import { TIKTOK_OPERATIONS, tiktokBase, tiktokCall, tiktokToken } from "./api.ts";
import { fetchTikTokMetrics, TIKTOK_METRICS_BATCH_SIZE } from "./metrics.ts";
import { createTikTokPublisher, type CreatorInfo, type TikTokDeps, type TikTokPublisher } from "./publish.ts";
import { checkTikTokItem, TIKTOK_LIMITS, TIKTOK_RULES } from "./rules.ts";
import {
  ProviderError,
  type ConnectedAccount,
  type Credentials,
  type OAuthAdapter,
  type ProviderAdapter,
} from "../types.ts";

export { TIKTOK_LIMITS, TIKTOK_RULES } from "./rules.ts";

/**
 * Scopes Herald asks for unless HERALD_TIKTOK_SCOPES says otherwise (comma-separated, as TikTok writes
 * them): the profile, direct posting, uploads, and the creator's videos for later analytics.
 */
export const TIKTOK_SCOPES = "user.info.basic,video.publish,video.upload,video.list";

/** Where users sign in when HERALD_TIKTOK_AUTH_BASE is not set. */
const DEFAULT_AUTH_BASE = "https://www.tiktok.com";

/**
 * How long before its refresh token dies the credentials job renews a TikTok grant (`renewBy`): the
 * refresh token lives 180 days unused and rotates on every refresh, so an account nobody posts to
 * keeps its grant. Access tokens are renewed at use.
 */
export const TIKTOK_RENEW_BEFORE_REFRESH_EXPIRY_MS = 7 * 24 * 60 * 60_000;

/** Used only when a token answer has no `expires_in`: the shortest lifetime TikTok documents. */
const FALLBACK_ACCESS_TTL_S = 2 * 60 * 60;

/** What a TikTok destination stores; the refresh token rotates, so every refresh stores the newest. */
export interface TikTokCredentials extends Credentials {
  accessToken: string;
  /** When the access token expires, epoch ms (`expires_in` of the answer). */
  expiresAt: number;
  refreshToken: string;
  /** When the refresh token expires, epoch ms (`refresh_expires_in`); past it only a new grant helps. */
  refreshExpiresAt: number | null;
  /** When the credentials job renews the grant: a week before the refresh token dies. */
  renewBy: number | null;
  openId: string;
  scope: string;
}

/** The TikTok adapter: OAuth, and posts that go pending while TikTok uploads and processes them. */
export type TikTokAdapter = OAuthAdapter & Required<Pick<ProviderAdapter, "checkPending">>;

/** Builds the TikTok adapter; app credentials and origins come from `deps.apps.tiktok` (HERALD_TIKTOK_*). */
export function createTikTokAdapter(deps: TikTokDeps): TikTokAdapter {
  const publisher = createTikTokPublisher(deps);
  const scopes = () => tiktokScopes(deps);

  return {
    ...TIKTOK_RULES,
    checkItem: checkTikTokItem,
    connection: { kind: "oauth", registration: "fixed-app" },
    // The inits take no idempotency key: a second init is a second post.
    idempotentCreate: false,
    // A check only PUTs chunks again (same ranges) and reads the status; it never inits.
    pendingChecksRepeatable: true,
    // Two-hour access tokens are renewed at use; the grant itself by `renewBy`.
    refreshAheadMs: null,
    publishItem: publisher.publishItem,
    checkPending: publisher.checkPending,
    metricsBatchSize: TIKTOK_METRICS_BATCH_SIZE,

    /** POST /v2/video/query/ (metrics.ts): views, likes, comments and shares of public posts. */
    fetchMetrics: (input) => fetchTikTokMetrics(deps, input),

    /**
     * TikTok's web authorization. No PKCE: TikTok asks it of desktop and mobile apps only, and documents
     * a hex-encoded challenge there, not RFC 7636's base64url one Herald makes; sending one could make
     * TikTok refuse the code exchange. The client secret and the single-use `state` guard the flow.
     */
    authorizationUrl({ clientId, redirectUri, state }) {
      const query = new URLSearchParams({
        client_key: clientId,
        scope: scopes(),
        response_type: "code",
        redirect_uri: redirectUri,
        state,
      });
      return `${tiktokBase(deps.apps.tiktok?.authBase ?? DEFAULT_AUTH_BASE)}/v2/auth/authorize/?${query}`;
    },

    /**
     * Code → tokens → the user's profile (`username` only when the grant has user.info.profile) and the
     * creator's username from creator_info (needed for post URLs). A grant without video.publish
     * cannot post and is refused.
     */
    completeAuthorization: (input) => connectTikTokAccount(deps, publisher, input),

    /**
     * The refresh grant. TikTok rotates refresh tokens: the answer's replaces the stored one (the engine
     * serialises refreshes, so two never race). A refresh token past `refreshExpiresAt`, or one TikTok
     * refuses (`invalid_grant`), is `auth_revoked`.
     */
    refreshCredentials: (input) => renewTikTokToken(deps, input),
  };
}

/** Credentials from a token answer; what it leaves out keeps its value from `previous`. */
function credentialsFrom(
  deps: TikTokDeps,
  token: Record<string, any>,
  previous: Partial<TikTokCredentials>,
): TikTokCredentials {
  const now = deps.clock.now();
  const seconds = (value: unknown) => {
    const n = Number(value);
    return Number.isFinite(n) && n > 0 ? n : null;
  };
  const refreshToken =
    typeof token.refresh_token === "string" && token.refresh_token !== ""
      ? token.refresh_token
      : (previous.refreshToken ?? "");
  const refreshTtl = seconds(token.refresh_expires_in);
  const refreshExpiresAt =
    refreshTtl !== null ? now + refreshTtl * 1000 : (previous.refreshExpiresAt ?? null);
  return {
    accessToken: token.access_token,
    expiresAt: now + (seconds(token.expires_in) ?? FALLBACK_ACCESS_TTL_S) * 1000,
    refreshToken,
    refreshExpiresAt,
    renewBy: refreshExpiresAt === null ? null : refreshExpiresAt - TIKTOK_RENEW_BEFORE_REFRESH_EXPIRY_MS,
    openId:
      typeof token.open_id === "string" && token.open_id !== "" ? token.open_id : (previous.openId ?? ""),
    scope:
      typeof token.scope === "string" && token.scope !== ""
        ? token.scope
        : (previous.scope ?? tiktokScopes(deps)),
  };
}

/** TikTok as the registry lists it. */
export const TIKTOK_NETWORK: NetworkDefinition = {
  rules: TIKTOK_RULES,
  // DESIGN.md "Network apps, API origins and storage engines": the documented origins.
  origins: { api: "https://open.tiktokapis.com", auth: "https://www.tiktok.com" },
  create: createTikTokAdapter,
};

/** The scopes asked for: HERALD_TIKTOK_SCOPES, else Herald's set. */
function tiktokScopes(deps: TikTokDeps): string {
  return deps.apps.tiktok?.scopes?.trim() || TIKTOK_SCOPES;
}

/** Code → tokens → the creator's profile and posting settings, as one destination. */
async function connectTikTokAccount(
  deps: TikTokDeps,
  publisher: TikTokPublisher,
  {
    origin,
    clientId,
    clientSecret,
    redirectUri,
    code,
  }: Parameters<TikTokAdapter["completeAuthorization"]>[0],
) {
  const token = await tiktokToken({
    deps,
    tokenBase: deps.apps.tiktok?.tokenBase ?? origin,
    form: {
      client_key: clientId,
      client_secret: clientSecret,
      code,
      grant_type: "authorization_code",
      redirect_uri: redirectUri,
    },
    idempotent: false, // the code is single-use
  });
  const credentials = credentialsFrom(deps, token, {});
  const granted = credentials.scope.split(/[\s,]+/);
  if (!granted.includes("video.publish"))
    throw new ProviderError(
      "auth_revoked",
      "the TikTok account did not allow video.publish, without which Herald cannot post; connect it again and allow posting",
      { operation: TIKTOK_OPERATIONS.token },
    );
  const fields = ["open_id", "union_id", "avatar_url", "display_name"];
  if (granted.includes("user.info.profile")) fields.push("username");
  const { data } = await tiktokCall({
    deps,
    operation: TIKTOK_OPERATIONS.userInfo,
    url: `${tiktokBase(origin)}/v2/user/info/?${new URLSearchParams({ fields: fields.join(",") })}`,
    init: { headers: { authorization: `Bearer ${credentials.accessToken}` } },
    idempotent: true,
  });
  const user = (data.user ?? {}) as Record<string, unknown>;
  const destination = { origin, externalId: "", handle: "", credentials, limits: TIKTOK_LIMITS };
  let creator: CreatorInfo | null = null;
  try {
    creator = await publisher.creatorInfo(destination);
  } catch {
    // The profile connects without it; each post reads creator_info again anyway.
  }
  const openId = typeof user.open_id === "string" && user.open_id !== "" ? user.open_id : credentials.openId;
  if (!openId)
    throw new ProviderError("transient", `${TIKTOK_OPERATIONS.userInfo}: TikTok's answer has no open_id`, {
      operation: TIKTOK_OPERATIONS.userInfo,
    });
  const handle = (typeof user.username === "string" && user.username) || creator?.username || "";
  const displayName =
    (typeof user.display_name === "string" && user.display_name) || creator?.nickname || handle || openId;
  const account: ConnectedAccount = {
    externalId: openId,
    handle,
    displayName,
    profileImageUrl: typeof user.avatar_url === "string" ? user.avatar_url : (creator?.avatarUrl ?? null),
    credentials: { ...credentials, openId },
    limits: { ...TIKTOK_LIMITS },
  };
  return [account];
}

/** The refresh grant with TikTok's rotating refresh token. */
async function renewTikTokToken(
  deps: TikTokDeps,
  { destination }: Parameters<TikTokAdapter["refreshCredentials"]>[0],
): Promise<Credentials> {
  const operation = TIKTOK_OPERATIONS.token;
  const app = appForRenewal({
    app: deps.apps.tiktok,
    channel: "tiktok",
    displayName: "TikTok",
    operation,
  });
  const stored = destination.credentials as Partial<TikTokCredentials>;
  const refreshToken = storedRefreshToken({ credentials: stored, displayName: "TikTok", operation });
  if (typeof stored.refreshExpiresAt === "number" && stored.refreshExpiresAt <= deps.clock.now())
    throw new ProviderError("auth_revoked", "the TikTok refresh token expired; connect the account again", {
      operation,
    });
  const token = await tiktokToken({
    deps,
    tokenBase: app.tokenBase,
    form: {
      client_key: app.clientId,
      client_secret: app.clientSecret,
      grant_type: "refresh_token",
      refresh_token: refreshToken,
    },
    // Repeating a refresh creates nothing: at worst the used token is refused (auth_revoked).
    idempotent: true,
  });
  return credentialsFrom(deps, token, stored);
}
