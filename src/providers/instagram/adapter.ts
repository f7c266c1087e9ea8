// The Instagram adapter (providers.md §5) in its Facebook Login flavour: the person signs in with
// Facebook, and every Instagram professional account linked to a Page they manage becomes a
// destination holding that Page's token (which does not expire). Posts go out through containers
// (publish.ts) with the rules of rules.ts. Instagram Login is not offered.
import { findInstagramComment, publishInstagramComment } from "./comments.ts";
import type { NetworkDefinition } from "../registry.ts";
import { graphCall } from "../facebook/graph.ts";
import { fetchInstagramMetrics, INSTAGRAM_METRICS_BATCH_SIZE } from "./metrics.ts";
import { createInstagramPublisher } from "./publish.ts";
import { checkInstagramItem, INSTAGRAM_LIMITS, INSTAGRAM_RULES } from "./rules.ts";
import { facebookLoginConnector, META_DEFAULT_APP, type ManagedPage } from "../meta/login.ts";
import {
  ProviderError,
  type AdapterDeps,
  type ConnectedAccount,
  type Credentials,
  type OAuthAdapter,
  type ProviderAdapter,
} from "../types.ts";

export { INSTAGRAM_LIMITS, INSTAGRAM_RULES } from "./rules.ts";

/**
 * Scopes Herald asks for: read and publish for the Instagram account, list the Pages it is linked
 * through (and Business Manager ones), and insights so numbers can be read without reconnecting.
 */
export const INSTAGRAM_SCOPES = [
  "instagram_basic",
  "instagram_content_publish",
  "instagram_manage_insights",
  "pages_show_list",
  "pages_read_engagement",
  "business_management",
  // First comments (POST /{ig-media-id}/comments) since issue 31.
  "instagram_manage_comments",
];

/** What an Instagram destination stores: the linked Page's token and the Page's id. */
export interface InstagramCredentials extends Credentials {
  accessToken: string;
  pageId: string;
}

/** The adapter: an OAuth connector whose items may be pending (containers still processing). */
export type InstagramAdapter = OAuthAdapter & Required<Pick<ProviderAdapter, "checkPending">>;

/** The Instagram adapter over `deps.apps.instagram` (Facebook Login origins, scope override). */
export function createInstagramAdapter(deps: AdapterDeps): InstagramAdapter {
  const publisher = createInstagramPublisher(deps);

  return {
    ...INSTAGRAM_RULES,
    checkItem: checkInstagramItem,
    // media_publish has no idempotency key: an unanswered publish may have posted.
    idempotentCreate: false,
    // Instagram publishes a container once: a check cut short is checked again, never re-published.
    pendingChecksRepeatable: true,
    publishItem: publisher.publishItem,
    checkPending: publisher.checkPending,
    reconcileItem: publisher.reconcileItem,
    publishFirstComment: (input) => publishInstagramComment(deps, input),
    findFirstComment: (input) => findInstagramComment(deps, input),

    metricsBatchSize: INSTAGRAM_METRICS_BATCH_SIZE,

    /** Each media's insights, or its like and comment counts when they have nothing (metrics.ts). */
    fetchMetrics: (input) => fetchInstagramMetrics(deps, input),

    /** Facebook Login (meta/login.ts): one destination per linked professional account. */
    ...facebookLoginConnector(deps, {
      app: () => deps.apps.instagram ?? META_DEFAULT_APP,
      scopes: INSTAGRAM_SCOPES,
      instagram: true,
      accountsOf: ({ origin, pages }) => linkedInstagramAccounts(deps, origin, pages),
      renewalRefusal:
        "Instagram (through a Facebook Page) tokens cannot be renewed; connect the account again",
    }),
  };
}

/**
 * The Pages' linked Instagram accounts → one destination per professional account (its profile read
 * with the Page's token). Pages without one are skipped; none at all is refused.
 */
async function linkedInstagramAccounts(
  deps: AdapterDeps,
  origin: string,
  pages: ManagedPage[],
): Promise<ConnectedAccount[]> {
  const accounts: ConnectedAccount[] = [];
  for (const page of pages) {
    const igId = page.instagramAccountId;
    if (igId === null || accounts.some((a) => a.externalId === igId)) continue;
    const { body } = await graphCall({
      deps,
      origin,
      method: "GET",
      path: encodeURIComponent(igId),
      params: { fields: "id,username,name,profile_picture_url" },
      token: page.accessToken,
      operation: "GET /{ig-user-id}",
      idempotent: true,
    });
    const username = typeof body.username === "string" ? body.username : igId;
    accounts.push({
      externalId: igId,
      handle: username,
      displayName: typeof body.name === "string" && body.name !== "" ? body.name : username,
      profileImageUrl: typeof body.profile_picture_url === "string" ? body.profile_picture_url : null,
      credentials: { accessToken: page.accessToken, pageId: page.id } satisfies InstagramCredentials,
      limits: { ...INSTAGRAM_LIMITS },
    });
  }
  if (accounts.length === 0)
    throw new ProviderError(
      "rejected",
      pages.length === 0
        ? "Facebook gave Herald no Page: Instagram is connected through the Facebook Page it is linked to"
        : "none of the chosen Facebook Pages has an Instagram professional account linked to it",
      { operation: "GET /me/accounts" },
    );
  return accounts;
}

/** Instagram as the registry lists it. */
export const INSTAGRAM_NETWORK: NetworkDefinition = {
  rules: INSTAGRAM_RULES,
  // DESIGN.md "Network apps, API origins and storage engines": the documented origins.
  origins: { api: "https://graph.facebook.com", auth: "https://www.facebook.com" },
  create: createInstagramAdapter,
};
