// The YouTube adapter (Data API v3, providers.md §9): Google OAuth 2.0 with PKCE and offline access
// (one-hour access tokens, a refresh token Google usually does not re-issue), one destination per
// channel, and videos published through the resumable upload (publish.ts, upload.ts):
// publishItem only opens the upload session and hands back a pending item; the bytes go up inside
// status checks, which can run again at any point (the session says what it holds), then the checks
// wait for YouTube's processing. The post is published when YouTube has processed the video. Its
// numbers are read through metrics.ts.
import { findYouTubeComment, publishYouTubeComment } from "./comments.ts";
import { appForRenewal, storedRefreshToken } from "../refresh-grant.ts";
import { reconcileYouTubeItem } from "./reconcile.ts";
import type { NetworkDefinition } from "../registry.ts";
import { checkYouTubeItem, YOUTUBE_LIMITS, YOUTUBE_RULES } from "./rules.ts";
import { YOUTUBE_OPERATIONS, bearer, youtubeBase, youtubeJson } from "./api.ts";
import { fetchYouTubeMetrics, YOUTUBE_METRICS_BATCH_SIZE } from "./metrics.ts";
import { createYouTubePublisher, type YouTubePublishDeps } from "./publish.ts";
import {
  ProviderError,
  type ConnectedAccount,
  type Credentials,
  type OAuthAdapter,
  type ProviderAdapter,
} from "../types.ts";

export { YOUTUBE_LIMITS, YOUTUBE_RULES } from "./rules.ts";
export {
  watchUrl,
  YOUTUBE_MAX_PROCESSING_MS,
  YOUTUBE_MAX_RECHECK_MS,
  YOUTUBE_RECHECK_MS,
} from "./publish.ts";

/**
 * The scopes Herald asks for unless HERALD_YOUTUBE_SCOPES says otherwise: upload, read the channel,
 * and (since issue 31) youtube.force-ssl, the only scope `commentThreads.insert` takes (first comments).
 */
export const YOUTUBE_SCOPES =
  "https://www.googleapis.com/auth/youtube.upload https://www.googleapis.com/auth/youtube.readonly " +
  "https://www.googleapis.com/auth/youtube.force-ssl";

/** Scopes that allow `videos.insert`; a grant without one of them cannot publish. */
const UPLOAD_SCOPES = new Set(
  ["youtube.upload", "youtube", "youtube.force-ssl", "youtubepartner"].map(
    (s) => `https://www.googleapis.com/auth/${s}`,
  ),
);

/** Google's origins when the registry was built without YouTube's app settings. */
const DEFAULT_AUTH_BASE = "https://accounts.google.com";
const DEFAULT_TOKEN_BASE = "https://oauth2.googleapis.com";

/** What a YouTube destination stores. Google rarely re-issues the refresh token: the old one is kept. */
export interface YouTubeCredentials extends Credentials {
  accessToken: string;
  refreshToken: string;
  /** When the access token expires, epoch ms (an hour after issue). */
  expiresAt: number;
  scope: string;
}

/** What the adapter is built with: the registry's deps (and a chunk size for tests). */
export type YouTubeDeps = YouTubePublishDeps;

/** The YouTube adapter: an OAuth adapter whose items are pending until uploaded and processed. */
export type YouTubeAdapter = OAuthAdapter & Required<Pick<ProviderAdapter, "checkPending">>;

/** Builds the YouTube adapter; app credentials and origins come from `deps.apps.youtube` (HERALD_YOUTUBE_*). */
export function createYouTubeAdapter(deps: YouTubeDeps): YouTubeAdapter {
  const publisher = createYouTubePublisher(deps);
  return {
    ...YOUTUBE_RULES,
    checkItem: (input) => checkYouTubeItem(input),
    connection: { kind: "oauth", registration: "fixed-app" },
    idempotentCreate: false,
    // The checks upload to one session (which makes at most one video) and read: they can run again.
    pendingChecksRepeatable: true,
    // One-hour tokens: renewing at publish time (or after a 401) is enough.
    refreshAheadMs: null,
    metricsBatchSize: YOUTUBE_METRICS_BATCH_SIZE,

    /** GET /youtube/v3/videos?part=statistics (metrics.ts): views, likes and comments. */
    fetchMetrics: (input) => fetchYouTubeMetrics(deps, input),

    authorizationUrl({ clientId, redirectUri, state, codeChallenge }) {
      const query = new URLSearchParams({
        client_id: clientId,
        redirect_uri: redirectUri,
        response_type: "code",
        scope: youtubeApp(deps).scopes,
        state,
        access_type: "offline",
        prompt: "consent",
        code_challenge: codeChallenge,
        code_challenge_method: "S256",
      });
      return `${youtubeApp(deps).authBase}/o/oauth2/v2/auth?${query}`;
    },

    /** Code → tokens (with PKCE) → the channel of the account; an account without a channel is refused. */
    completeAuthorization: (input) => connectYouTubeChannel(deps, input),

    /** The refresh grant; Google usually answers without a refresh token, and the stored one stays. */
    refreshCredentials: (input) => renewYouTubeToken(deps, input),

    ...publisher,
    reconcileItem: (input) => reconcileYouTubeItem(deps, input),
    publishFirstComment: (input) => publishYouTubeComment(deps, input),
    findFirstComment: (input) => findYouTubeComment(deps, input),
  };
}

/** Google's token endpoint (client credentials in the form, as Google's web-server flow shows). */
function token(deps: YouTubeDeps, input: { form: Record<string, string>; idempotent: boolean }) {
  return youtubeJson({
    deps,
    operation: YOUTUBE_OPERATIONS.token,
    url: `${youtubeApp(deps).tokenBase}/token`,
    init: {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(input.form),
    },
    idempotent: input.idempotent,
  });
}

/** Credentials from a token answer; a refresh token Google left out keeps the one given. */
function credentialsOf(
  deps: YouTubeDeps,
  answer: Record<string, any>,
  previousRefresh: string | null,
): YouTubeCredentials {
  const operation = YOUTUBE_OPERATIONS.token;
  const refreshToken =
    typeof answer.refresh_token === "string" && answer.refresh_token !== ""
      ? answer.refresh_token
      : previousRefresh;
  if (typeof answer.access_token !== "string" || answer.access_token === "")
    throw new ProviderError("transient", "Google's token answer has no access_token", { operation });
  if (!refreshToken)
    throw new ProviderError(
      "rejected",
      "Google granted no refresh token (Herald asks for offline access with prompt=consent); connect again",
      { operation },
    );
  const expiresIn = Number(answer.expires_in) > 0 ? Number(answer.expires_in) : 3600;
  return {
    accessToken: answer.access_token,
    refreshToken,
    expiresAt: deps.clock.now() + expiresIn * 1000,
    scope: typeof answer.scope === "string" ? answer.scope : youtubeApp(deps).scopes,
  };
}

/** YouTube as the registry lists it. */
export const YOUTUBE_NETWORK: NetworkDefinition = {
  rules: YOUTUBE_RULES,
  // DESIGN.md "Network apps, API origins and storage engines": the documented origins.
  // Google's token endpoint has its own host (oauth2.googleapis.com/token).
  origins: {
    api: "https://www.googleapis.com",
    auth: "https://accounts.google.com",
    token: "https://oauth2.googleapis.com",
  },
  create: createYouTubeAdapter,
};

/** The app settings as the adapter uses them: Google's origins unless configured, Herald's scopes unless replaced. */
function youtubeApp(deps: YouTubeDeps) {
  const configured = deps.apps.youtube;
  return {
    clientId: configured?.clientId ?? null,
    clientSecret: configured?.clientSecret ?? null,
    authBase: youtubeBase(configured?.authBase ?? DEFAULT_AUTH_BASE),
    tokenBase: youtubeBase(configured?.tokenBase ?? DEFAULT_TOKEN_BASE),
    scopes: configured?.scopes?.trim() || YOUTUBE_SCOPES,
  };
}

/** Code (with the PKCE verifier) → tokens → the account's channel as a destination. */
async function connectYouTubeChannel(
  deps: YouTubeDeps,
  {
    origin,
    clientId,
    clientSecret,
    redirectUri,
    code,
    codeVerifier,
  }: Parameters<YouTubeAdapter["completeAuthorization"]>[0],
) {
  const answer = await token(deps, {
    form: {
      grant_type: "authorization_code",
      code,
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uri: redirectUri,
      code_verifier: codeVerifier,
    },
    idempotent: false, // the code is single-use
  });
  const credentials = credentialsOf(deps, answer, null);
  // Google lets the user untick permissions on the consent screen.
  if (typeof answer.scope === "string" && !answer.scope.split(" ").some((s) => UPLOAD_SCOPES.has(s)))
    throw new ProviderError(
      "rejected",
      "the permission to upload videos was not granted; connect again and keep “Manage your YouTube videos” ticked",
      { operation: YOUTUBE_OPERATIONS.token, errorCode: "upload_scope_not_granted" },
    );
  const query = new URLSearchParams({ part: "snippet", mine: "true" });
  const listed = await youtubeJson({
    deps,
    operation: YOUTUBE_OPERATIONS.channels,
    url: `${youtubeBase(origin)}/youtube/v3/channels?${query}`,
    init: { headers: bearer(credentials.accessToken) },
    idempotent: true,
  });
  const channels: Record<string, any>[] = Array.isArray(listed.items) ? listed.items : [];
  const accounts = channels
    .filter((c) => typeof c?.id === "string" && c.id !== "")
    .map((channel): ConnectedAccount => {
      const snippet = channel.snippet ?? {};
      const handle =
        typeof snippet.customUrl === "string" && snippet.customUrl !== ""
          ? snippet.customUrl.replace(/^@/, "")
          : channel.id;
      return {
        externalId: channel.id,
        handle,
        displayName: typeof snippet.title === "string" && snippet.title !== "" ? snippet.title : handle,
        profileImageUrl:
          typeof snippet.thumbnails?.default?.url === "string" ? snippet.thumbnails.default.url : null,
        credentials,
        limits: { ...YOUTUBE_LIMITS },
      };
    });
  if (accounts.length === 0)
    throw new ProviderError(
      "rejected",
      "this Google account has no YouTube channel: create one on youtube.com (or pick the account " +
        "that owns the channel when signing in), then connect again",
      { operation: YOUTUBE_OPERATIONS.channels, errorCode: "no_channel" },
    );
  return accounts;
}

/** The refresh grant; the stored refresh token stays when Google sends none. */
async function renewYouTubeToken(
  deps: YouTubeDeps,
  { destination }: Parameters<YouTubeAdapter["refreshCredentials"]>[0],
): Promise<Credentials> {
  const operation = YOUTUBE_OPERATIONS.token;
  const { clientId, clientSecret } = appForRenewal({
    app: youtubeApp(deps),
    channel: "youtube",
    displayName: "YouTube",
    operation,
  });
  const refreshToken = storedRefreshToken({
    credentials: destination.credentials,
    displayName: "YouTube",
    operation,
  });
  const answer = await token(deps, {
    form: {
      grant_type: "refresh_token",
      refresh_token: refreshToken,
      client_id: clientId,
      client_secret: clientSecret,
    },
    idempotent: true, // a refresh creates nothing
  });
  return credentialsOf(deps, answer, refreshToken);
}
