// The X (API v2) adapter: OAuth 2.0 authorization code + PKCE for Herald's confidential app,
// two-hour access tokens renewed with rotating single-use refresh tokens, POST /2/tweets with
// replies for threads, publishing in publish.ts (media through media.ts; a video still processing becomes a pending item).
import { appForRenewal, storedRefreshToken } from "../refresh-grant.ts";
import type { NetworkDefinition } from "../registry.ts";
import type { XMediaDeps } from "./media.ts";
import { createXPublisher } from "./publish.ts";
import { fetchXMetrics, X_METRICS_BATCH_SIZE } from "./metrics.ts";
import { X_OPERATIONS, xBase, xJson } from "./http.ts";
import { checkXItem, X_RULES, xLimitsFor } from "./rules.ts";
import {
  ProviderError,
  type ConnectedAccount,
  type Credentials,
  type OAuthAdapter,
  type ProviderAdapter,
} from "../types.ts";

/** What the X adapter is built with (the registry's deps; `xChunkBytes` for tests). */
export type XDeps = XMediaDeps;

/** The scopes Herald asks for: posting, reading the account, media upload, and a refresh token. */
export const X_SCOPES = "tweet.read tweet.write users.read offline.access media.write";

/** Where users sign in when HERALD_X_AUTH_BASE is not set. */
const DEFAULT_AUTH_BASE = "https://x.com";

/** What an X destination stores. The refresh token is single-use: every refresh returns the next one. */
export interface XCredentials extends Credentials {
  accessToken: string;
  refreshToken: string;
  /** When the access token expires, epoch ms (two hours after issue). */
  expiresAt: number;
  scope: string;
}

/** The X adapter: an OAuth adapter that may hand back pending items (videos still processing). */
export type XAdapter = OAuthAdapter & Required<Pick<ProviderAdapter, "checkPending">>;

/** Builds the X adapter; app credentials and origins come from `deps.apps.x` (HERALD_X_*). */
export function createXAdapter(deps: XDeps): XAdapter {
  return {
    ...X_RULES,
    checkItem: checkXItem,
    connection: { kind: "oauth", registration: "fixed-app" },
    idempotentCreate: false,
    // Two-hour tokens: renewing at publish time (or after a 401) is enough.
    // The post is created inside the check: one cut short may have created it.
    pendingChecksRepeatable: false,
    refreshAheadMs: null,

    metricsBatchSize: X_METRICS_BATCH_SIZE,
    ...createXPublisher(deps),

    /** GET /2/tweets?ids= (metrics.ts): public numbers, and non-public ones under 30 days. */
    fetchMetrics: (input) => fetchXMetrics(deps, input),

    authorizationUrl({ clientId, redirectUri, state, codeChallenge }) {
      const query = new URLSearchParams({
        response_type: "code",
        client_id: clientId,
        redirect_uri: redirectUri,
        scope: scopes(deps),
        state,
        code_challenge: codeChallenge,
        code_challenge_method: "S256",
      });
      return `${xBase(deps.apps.x?.authBase ?? DEFAULT_AUTH_BASE)}/i/oauth2/authorize?${query}`;
    },

    completeAuthorization: (input) => connectXAccount(deps, input),

    /**
     * The refresh grant; the answer's refresh token replaces the used one (X's refresh tokens are
     * single-use).
     */
    refreshCredentials: (input) => renewXToken(deps, input),
  };
}

/** The token endpoint with HTTP Basic client authentication (X's confidential clients). */
async function token(
  deps: XDeps,
  input: {
    tokenBase: string;
    clientId: string;
    clientSecret: string;
    params: Record<string, string>;
    idempotent: boolean;
  },
): Promise<Record<string, any>> {
  const basic = Buffer.from(`${input.clientId}:${input.clientSecret}`).toString("base64");
  return xJson({
    deps,
    operation: X_OPERATIONS.token,
    url: `${xBase(input.tokenBase)}/2/oauth2/token`,
    init: {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${basic}` },
      body: new URLSearchParams({ ...input.params, client_id: input.clientId }),
    },
    idempotent: input.idempotent,
  });
}

/** Credentials from a token answer; a refresh token X left out keeps the one given. */
function credentialsOf(
  deps: XDeps,
  answer: Record<string, any>,
  previousRefresh: string | null,
): XCredentials {
  const expiresIn = Number(answer.expires_in) > 0 ? Number(answer.expires_in) : 7200;
  const refreshToken = typeof answer.refresh_token === "string" ? answer.refresh_token : previousRefresh;
  if (typeof answer.access_token !== "string" || !refreshToken)
    throw new ProviderError(
      "auth_revoked",
      "X granted no refresh token: the app must be allowed the offline.access scope",
      { operation: X_OPERATIONS.token },
    );
  return {
    accessToken: answer.access_token,
    refreshToken,
    expiresAt: deps.clock.now() + expiresIn * 1000,
    scope: typeof answer.scope === "string" ? answer.scope : scopes(deps),
  };
}

/** The scopes asked for: HERALD_X_SCOPES, else Herald's set. */
function scopes(deps: XDeps): string {
  return deps.apps.x?.scopes ?? X_SCOPES;
}

/** X as the registry lists it. */
export const X_NETWORK: NetworkDefinition = {
  rules: X_RULES,
  // DESIGN.md "Network apps, API origins and storage engines": the documented origins.
  origins: { api: "https://api.x.com", auth: "https://x.com" },
  create: createXAdapter,
};

/** Code (with the PKCE verifier) → tokens → the user, as one destination. */
async function connectXAccount(
  deps: XDeps,
  {
    origin,
    clientId,
    clientSecret,
    redirectUri,
    code,
    codeVerifier,
  }: Parameters<XAdapter["completeAuthorization"]>[0],
) {
  const answer = await token(deps, {
    tokenBase: deps.apps.x?.tokenBase ?? origin,
    clientId,
    clientSecret,
    params: {
      grant_type: "authorization_code",
      code,
      redirect_uri: redirectUri,
      code_verifier: codeVerifier,
    },
    idempotent: false, // the code is single-use
  });
  const credentials = credentialsOf(deps, answer, null);
  const me = await xJson({
    deps,
    operation: X_OPERATIONS.me,
    // subscription_type: a subscribed account may post up to 25,000 weighted characters.
    url: `${xBase(origin)}/2/users/me?${new URLSearchParams({ "user.fields": "profile_image_url,subscription_type" })}`,
    init: { headers: { authorization: `Bearer ${credentials.accessToken}` } },
    idempotent: true,
  });
  const user = me.data ?? {};
  if (typeof user.id !== "string" || typeof user.username !== "string")
    throw new ProviderError("transient", `${X_OPERATIONS.me}: X's answer has no user`, {
      operation: X_OPERATIONS.me,
    });
  const account: ConnectedAccount = {
    externalId: user.id,
    handle: user.username,
    displayName: typeof user.name === "string" && user.name !== "" ? user.name : user.username,
    profileImageUrl: typeof user.profile_image_url === "string" ? user.profile_image_url : null,
    credentials,
    limits: xLimitsFor(user.subscription_type),
  };
  return [account];
}

/** The refresh grant; X's refresh tokens are single-use. */
async function renewXToken(
  deps: XDeps,
  { destination }: Parameters<XAdapter["refreshCredentials"]>[0],
): Promise<Credentials> {
  const operation = X_OPERATIONS.token;
  const app = appForRenewal({ app: deps.apps.x, channel: "x", displayName: "X", operation });
  const refreshToken = storedRefreshToken({
    credentials: destination.credentials,
    displayName: "X",
    operation,
  });
  const answer = await token(deps, {
    tokenBase: app.tokenBase,
    clientId: app.clientId,
    clientSecret: app.clientSecret,
    params: { grant_type: "refresh_token", refresh_token: refreshToken },
    // Repeating a refresh creates nothing: at worst the used token is refused (auth_revoked).
    idempotent: true,
  });
  return credentialsOf(deps, answer, refreshToken);
}
