// The Facebook Pages adapter (providers.md §6): Facebook Login (meta/login.ts) connects every Page the
// person manages as its own destination, holding the Page's token (which does not expire); posts,
// photos and reels go out through publish.ts with the rules of rules.ts.
import type { NetworkDefinition } from "../registry.ts";
import { FACEBOOK_METRICS_BATCH_SIZE, fetchFacebookMetrics } from "./metrics.ts";
import { createFacebookPublisher } from "./publish.ts";
import { FACEBOOK_LIMITS, FACEBOOK_RULES, checkFacebookItem } from "./rules.ts";
import {
  exchangeCodeForLongLivedToken,
  facebookDialogUrl,
  listManagedPages,
  META_DEFAULT_APP,
} from "../meta/login.ts";
import {
  ProviderError,
  type AdapterDeps,
  type ConnectedAccount,
  type Credentials,
  type OAuthAdapter,
  type ProviderAdapter,
} from "../types.ts";

export { FACEBOOK_LIMITS, FACEBOOK_RULES } from "./rules.ts";

/** Scopes Herald asks for: list the Pages, publish on them, read engagement and insights. */
export const FACEBOOK_SCOPES = [
  "pages_show_list",
  "pages_manage_posts",
  "pages_read_engagement",
  "read_insights",
];

/** What a Facebook destination stores: the Page token (no expiry; it dies with the grant). */
export interface FacebookCredentials extends Credentials {
  accessToken: string;
}

/** The adapter: an OAuth connector whose reels may be pending while Meta processes them. */
export type FacebookAdapter = OAuthAdapter & Required<Pick<ProviderAdapter, "checkPending">>;

/** The Facebook adapter over `deps.apps.facebook` (dialog and token origins, scope override). */
export function createFacebookAdapter(deps: AdapterDeps): FacebookAdapter {
  const app = () => deps.apps.facebook ?? META_DEFAULT_APP;
  const publisher = createFacebookPublisher(deps);

  return {
    ...FACEBOOK_RULES,
    checkItem: checkFacebookItem,
    connection: { kind: "oauth", registration: "fixed-app" },
    // Graph creates take no idempotency key: an unanswered feed post or reel finish may have published.
    idempotentCreate: false,
    // A reel's pending check only reads its status: repeating it cannot publish twice.
    pendingChecksRepeatable: true,
    // Page tokens do not expire; there is nothing to renew ahead.
    refreshAheadMs: null,
    publishItem: publisher.publishItem,
    checkPending: publisher.checkPending,

    metricsBatchSize: FACEBOOK_METRICS_BATCH_SIZE,

    /** Counts in one multi-id read, then each post's insights (metrics.ts). */
    fetchMetrics: (input) => fetchFacebookMetrics(deps, input),

    /** Facebook Login has no PKCE: the challenge is not sent (the app secret guards the code exchange). */
    authorizationUrl({ clientId, redirectUri, state }) {
      return facebookDialogUrl({
        app: app(),
        clientId,
        redirectUri,
        state,
        scopes: app().scopes ?? FACEBOOK_SCOPES.join(","),
      });
    },

    /** Code → long-lived user token → one destination per Page, each with its own Page token. */
    async completeAuthorization({
      origin,
      clientId,
      clientSecret,
      redirectUri,
      code,
    }): Promise<ConnectedAccount[]> {
      const userToken = await exchangeCodeForLongLivedToken({
        deps,
        app: app(),
        clientId,
        clientSecret,
        redirectUri,
        code,
      });
      const pages = await listManagedPages({ deps, origin, userToken, instagram: false });
      if (pages.length === 0)
        throw new ProviderError(
          "rejected",
          "Facebook gave Herald no Page to publish to: choose at least one Page you manage when asked",
          { operation: "GET /me/accounts" },
        );
      return pages.map((page) => ({
        externalId: page.id,
        handle: page.username ?? page.id,
        displayName: page.name,
        profileImageUrl: page.pictureUrl,
        credentials: { accessToken: page.accessToken } satisfies FacebookCredentials,
        limits: { ...FACEBOOK_LIMITS },
      }));
    },

    /** Page tokens never expire; one Meta refuses (code 190) can only be replaced by connecting again. */
    async refreshCredentials(): Promise<Credentials> {
      throw new ProviderError(
        "auth_revoked",
        "Facebook Page tokens cannot be renewed; connect the Page again",
        { operation: "refreshCredentials" },
      );
    },
  };
}

/** Facebook as the registry lists it. */
export const FACEBOOK_NETWORK: NetworkDefinition = {
  rules: FACEBOOK_RULES,
  // DESIGN.md "Network apps, API origins and storage engines": the documented origins.
  origins: { api: "https://graph.facebook.com", auth: "https://www.facebook.com" },
  create: createFacebookAdapter,
};
