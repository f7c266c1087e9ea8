// The Threads adapter (Meta Threads API, providers.md §4): OAuth without PKCE, the short-lived token
// exchanged for a 60-day one and renewed before it dies, and publishing through containers
// (publish.ts) with the rules of rules.ts.
import type { NetworkDefinition } from "../registry.ts";
import type { NetworkApp } from "../types.ts";
import { metaGraphCall } from "../meta/graph.ts";
import { fetchThreadsMetrics, THREADS_METRICS_BATCH_SIZE } from "./metrics.ts";
import { createThreadsPublisher, THREADS_API_VERSION } from "./publish.ts";
import { checkThreadsItem, THREADS_LIMITS, THREADS_RULES } from "./rules.ts";
import {
  ProviderError,
  type AdapterDeps,
  type ConnectedAccount,
  type Credentials,
  type OAuthAdapter,
  type ProviderAdapter,
} from "../types.ts";

export { THREADS_LIMITS, THREADS_RULES } from "./rules.ts";

/** Scopes Herald asks for: read the profile, publish, publish replies (thread items), read insights. */
export const THREADS_SCOPES = [
  "threads_basic",
  "threads_content_publish",
  "threads_manage_replies",
  "threads_manage_insights",
];

/** A long-lived token can be refreshed only once it is this old (Meta refuses younger ones). */
export const THREADS_MIN_REFRESH_AGE_MS = 24 * 60 * 60_000;

/** Long-lived token lifetime when the answer does not say (Meta: 60 days). */
const DEFAULT_TOKEN_LIFETIME_MS = 60 * 24 * 60 * 60_000;

/** How early the credentials job renews a token: a 60-day token dies unused unless refreshed. */
export const THREADS_REFRESH_AHEAD_MS = 7 * 24 * 60 * 60_000;

/**
 * What a Threads destination stores: the long-lived token, when it expires and when it was issued (epoch
 * ms).
 */
export interface ThreadsCredentials extends Credentials {
  accessToken: string;
  expiresAt: number;
  issuedAt: number;
}

/** The adapter: an OAuth connector whose items may be pending (containers still processing). */
export type ThreadsAdapter = OAuthAdapter & Required<Pick<ProviderAdapter, "checkPending">>;

/** Meta's documented origins, used when the registry was built without Threads' app settings. */
const DEFAULT_APP: NetworkApp = {
  clientId: null,
  clientSecret: null,
  apiBase: "https://graph.threads.net",
  authBase: "https://threads.net",
  tokenBase: "https://graph.threads.net",
  scopes: null,
};

/** The Threads adapter over `deps.apps.threads` (authorize and token origins, scope override). */
export function createThreadsAdapter(deps: AdapterDeps): ThreadsAdapter {
  const app = () => deps.apps.threads ?? DEFAULT_APP;
  const publisher = createThreadsPublisher(deps);

  return {
    ...THREADS_RULES,
    checkItem: checkThreadsItem,
    connection: { kind: "oauth", registration: "fixed-app" },
    // threads_publish has no idempotency key: an unanswered publish may have posted.
    idempotentCreate: false,
    // Threads publishes a container once: a check cut short is checked again, never re-published.
    pendingChecksRepeatable: true,
    refreshAheadMs: THREADS_REFRESH_AHEAD_MS,
    publishItem: publisher.publishItem,
    checkPending: publisher.checkPending,
    reconcileItem: publisher.reconcileItem,

    metricsBatchSize: THREADS_METRICS_BATCH_SIZE,

    /** GET /{media-id}/insights for each post (metrics.ts). */
    fetchMetrics: (input) => fetchThreadsMetrics(deps, input),

    /** Threads does not use PKCE: the challenge is not sent (the client secret guards the code exchange). */
    authorizationUrl({ clientId, redirectUri, state }) {
      const query = new URLSearchParams({
        client_id: clientId,
        redirect_uri: redirectUri,
        scope: app().scopes ?? THREADS_SCOPES.join(","),
        response_type: "code",
        state,
      });
      return `${base(app().authBase)}/oauth/authorize?${query}`;
    },

    /** Code → short-lived token (1 h) → long-lived token (60 days) → the profile. */
    completeAuthorization: (input) => connectThreadsAccount(deps, app, input),

    /**
     * th_refresh_token: the same grant, a new token valid 60 days. Meta refuses tokens younger than
     * 24 h, so those come back unchanged; a dead token (code 190) is `auth_revoked`.
     */
    refreshCredentials: (input) => renewThreadsToken(deps, input),
  };
}

/** The long-lived token's credentials from an answer with `access_token` and `expires_in` (seconds). */
function credentialsFrom(
  deps: AdapterDeps,
  body: Record<string, any>,
  operation: string,
): ThreadsCredentials {
  if (typeof body.access_token !== "string" || body.access_token === "")
    throw new ProviderError("auth_revoked", `${operation}: the answer has no access token`, { operation });
  const now = deps.clock.now();
  const expiresIn = Number(body.expires_in);
  return {
    accessToken: body.access_token,
    expiresAt:
      now + (Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn * 1000 : DEFAULT_TOKEN_LIFETIME_MS),
    issuedAt: now,
  };
}

function base(origin: string): string {
  return origin.replace(/\/+$/, "");
}

/** Threads as the registry lists it. */
export const THREADS_NETWORK: NetworkDefinition = {
  rules: THREADS_RULES,
  // DESIGN.md "Network apps, API origins and storage engines": the documented origins.
  origins: { api: "https://graph.threads.net", auth: "https://threads.net" },
  create: createThreadsAdapter,
};

/** Code → short-lived token (1 h) → long-lived token (60 days) → the profile, as one destination. */
async function connectThreadsAccount(
  deps: AdapterDeps,
  app: () => NetworkApp,
  {
    origin,
    clientId,
    clientSecret,
    redirectUri,
    code,
  }: Parameters<ThreadsAdapter["completeAuthorization"]>[0],
): Promise<ConnectedAccount[]> {
  const short = await metaGraphCall({
    deps,
    operation: "POST /oauth/access_token",
    url: `${base(app().tokenBase)}/oauth/access_token`,
    init: {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        client_id: clientId,
        client_secret: clientSecret,
        grant_type: "authorization_code",
        redirect_uri: redirectUri,
        code,
      }),
    },
    idempotent: false, // the code is single-use
  });
  const exchange = "GET /access_token?grant_type=th_exchange_token";
  const long = await metaGraphCall({
    deps,
    operation: exchange,
    url: `${base(origin)}/access_token?${new URLSearchParams({
      grant_type: "th_exchange_token",
      client_secret: clientSecret,
      access_token: String(short.body.access_token ?? ""),
    })}`,
    idempotent: true,
  });
  const credentials = credentialsFrom(deps, long.body, exchange);
  const { body: me } = await metaGraphCall({
    deps,
    operation: "GET /me",
    url: `${base(origin)}/${THREADS_API_VERSION}/me?${new URLSearchParams({
      fields: "id,username,name,threads_profile_picture_url",
      access_token: credentials.accessToken,
    })}`,
    idempotent: true,
  });
  const username = String(me.username ?? "");
  return [
    {
      externalId: String(me.id ?? short.body.user_id),
      handle: username,
      displayName: typeof me.name === "string" && me.name !== "" ? me.name : username,
      profileImageUrl:
        typeof me.threads_profile_picture_url === "string" ? me.threads_profile_picture_url : null,
      credentials,
      limits: { ...THREADS_LIMITS },
    },
  ];
}

/** th_refresh_token, unless the token is too young to be refreshed. */
async function renewThreadsToken(
  deps: AdapterDeps,
  { destination }: Parameters<ThreadsAdapter["refreshCredentials"]>[0],
): Promise<Credentials> {
  const stored = destination.credentials as Partial<ThreadsCredentials>;
  const issuedAt = typeof stored.issuedAt === "number" ? stored.issuedAt : 0;
  if (deps.clock.now() - issuedAt < THREADS_MIN_REFRESH_AGE_MS) return { ...stored };
  const operation = "GET /refresh_access_token";
  const { body } = await metaGraphCall({
    deps,
    operation,
    url: `${base(destination.origin)}/refresh_access_token?${new URLSearchParams({
      grant_type: "th_refresh_token",
      access_token: String(stored.accessToken ?? ""),
    })}`,
    idempotent: true, // refreshing twice yields two valid tokens; nothing is lost
  });
  return credentialsFrom(deps, body, operation);
}
