// The Facebook Pages adapter (providers.md §6): Facebook Login (meta/login.ts) connects every Page the
// person manages as its own destination, holding the Page's token (which does not expire); posts,
// photos and reels go out through publish.ts with the rules of rules.ts.
import { findFacebookComment, publishFacebookComment } from "./comments.ts";
import type { NetworkDefinition } from "../registry.ts";
import { FACEBOOK_METRICS_BATCH_SIZE, fetchFacebookMetrics } from "./metrics.ts";
import { createFacebookPublisher } from "./publish.ts";
import { reconcileFacebookItem } from "./reconcile.ts";
import { FACEBOOK_LIMITS, FACEBOOK_RULES, checkFacebookItem } from "./rules.ts";
import { facebookLoginConnector, META_DEFAULT_APP, type ManagedPage } from "../meta/login.ts";
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
  // First comments (POST /{page-post-id}/comments) since issue 31.
  "pages_manage_engagement",
];

/** What a Facebook destination stores: the Page token (no expiry; it dies with the grant). */
export interface FacebookCredentials extends Credentials {
  accessToken: string;
}

/** The adapter: an OAuth connector whose reels may be pending while Meta processes them. */
export type FacebookAdapter = OAuthAdapter & Required<Pick<ProviderAdapter, "checkPending">>;

/** The Facebook adapter over `deps.apps.facebook` (dialog and token origins, scope override). */
export function createFacebookAdapter(deps: AdapterDeps): FacebookAdapter {
  const publisher = createFacebookPublisher(deps);

  return {
    ...FACEBOOK_RULES,
    checkItem: checkFacebookItem,
    // Graph creates take no idempotency key: an unanswered feed post or reel finish may have published.
    idempotentCreate: false,
    // A reel's pending check only reads its status: repeating it cannot publish twice.
    pendingChecksRepeatable: true,
    publishItem: publisher.publishItem,
    checkPending: publisher.checkPending,
    /** The Page's published posts since the unanswered create, by message; reels stay unknown (reconcile.ts). */
    reconcileItem: (input) => reconcileFacebookItem(deps, input),
    publishFirstComment: (input) => publishFacebookComment(deps, input),
    findFirstComment: (input) => findFacebookComment(deps, input),

    metricsBatchSize: FACEBOOK_METRICS_BATCH_SIZE,

    /** Counts in one multi-id read, then each post's insights (metrics.ts). */
    fetchMetrics: (input) => fetchFacebookMetrics(deps, input),

    /** Facebook Login (meta/login.ts): one destination per Page, each with its own Page token. */
    ...facebookLoginConnector(deps, {
      app: () => deps.apps.facebook ?? META_DEFAULT_APP,
      scopes: FACEBOOK_SCOPES,
      instagram: false,
      accountsOf: async ({ pages }) => facebookPageAccounts(pages),
      renewalRefusal: "Facebook Page tokens cannot be renewed; connect the Page again",
    }),
  };
}

/** Each managed Page as a destination holding the Page's token; none at all is refused. */
function facebookPageAccounts(pages: ManagedPage[]): ConnectedAccount[] {
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
}

/** Facebook as the registry lists it. */
export const FACEBOOK_NETWORK: NetworkDefinition = {
  rules: FACEBOOK_RULES,
  // DESIGN.md "Network apps, API origins and storage engines": the documented origins.
  origins: { api: "https://graph.facebook.com", auth: "https://www.facebook.com" },
  create: createFacebookAdapter,
};
