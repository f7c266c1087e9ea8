// LinkedIn: a member and the pages they administer, connected through one OAuth grant; posts through
// the versioned Posts API (publish.ts) with images and videos uploaded first (media.ts).
import { findLinkedInComment, publishLinkedInComment } from "./comments.ts";
import type { NetworkDefinition } from "../registry.ts";
import { expectJson } from "../http.ts";
import {
  LINKEDIN_API_VERSION,
  linkedinCall,
  restHeaders,
  TOKEN_OPERATION,
  type LinkedInDeps,
} from "./api.ts";
import { createLinkedInPublisher } from "./publish.ts";
import { reconcileLinkedInItem } from "./reconcile.ts";
import { fetchLinkedInMetrics, LINKEDIN_METRICS_BATCH_SIZE } from "./metrics.ts";
import { checkLinkedInItem, LINKEDIN_LIMITS, LINKEDIN_PAGE_PREFIX, LINKEDIN_RULES } from "./rules.ts";
import {
  ProviderError,
  type AdapterDeps,
  type ConnectedAccount,
  type Credentials,
  type OAuthAdapter,
} from "../types.ts";

export { LINKEDIN_MAX_PROCESSING_MS, LINKEDIN_RECHECK_MS } from "./publish.ts";

/** Scopes asked for unless HERALD_LINKEDIN_SCOPES says otherwise: sign-in, member posts, page posts. */
export const LINKEDIN_DEFAULT_SCOPES =
  "openid profile w_member_social w_organization_social r_organization_social rw_organization_admin";

/** An access token lives 60 days; the credentials job renews one with a refresh token a week early. */
const REFRESH_AHEAD_MS = 7 * 24 * 60 * 60 * 1000;
/** Used when the token answer has no `expires_in`. */
const DEFAULT_TOKEN_TTL_S = 60 * 24 * 60 * 60;

/** What a LinkedIn destination stores; the member and every page of one grant hold the same token. */
export interface LinkedInCredentials extends Credentials {
  accessToken: string;
  expiresAt: number;
  /** Only apps LinkedIn approved for programmatic refresh tokens get one (365 days, not extended). */
  refreshToken?: string;
  refreshTokenExpiresAt?: number;
  /** False without a refresh token: the token cannot be renewed, only replaced by connecting again. */
  renewable?: boolean;
}

/** The LinkedIn adapter: one OAuth grant connects the member and their pages; posts may wait for media. */
export function createLinkedInAdapter(registryDeps: AdapterDeps): OAuthAdapter {
  const deps: LinkedInDeps = { ...registryDeps, refused: { version: null } };
  return {
    ...LINKEDIN_RULES,
    checkItem: checkLinkedInItem,
    connection: { kind: "oauth", registration: "fixed-app" },
    ...createLinkedInPublisher(deps),
    /** The author's posts since the unanswered call, by commentary (reconcile.ts). */
    reconcileItem: (input) => reconcileLinkedInItem(deps, input),
    publishFirstComment: (input) => publishLinkedInComment(deps, input),
    findFirstComment: (input) => findLinkedInComment(deps, input),
    idempotentCreate: false,
    // The post is created inside the check: one cut short may have created it.
    pendingChecksRepeatable: false,
    refreshAheadMs: REFRESH_AHEAD_MS,

    metricsBatchSize: LINKEDIN_METRICS_BATCH_SIZE,

    /** LinkedIn answered 426 to the configured version: every LinkedIn destination shows it. */
    configurationProblem: () => (deps.refused.version === null ? null : "api_version_retired"),

    /** A page's posts through its share statistics; a member's are unsupported (metrics.ts). */
    fetchMetrics: (input) => fetchLinkedInMetrics(deps, input),

    /** LinkedIn's web flow takes no PKCE: the code is bound to the client secret and redirect URI. */
    authorizationUrl({ clientId, redirectUri, state }) {
      const query = new URLSearchParams({
        response_type: "code",
        client_id: clientId,
        redirect_uri: redirectUri,
        state,
        scope: linkedinApp(deps).scopes,
      });
      return `${linkedinApp(deps).authBase}/oauth/v2/authorization?${query}`;
    },

    completeAuthorization: (input) => connectLinkedInMember(deps, input),

    /**
     * A new access token from the refresh token (which LinkedIn does not rotate or extend); without
     * one, or once it expired, the account must be connected again.
     */
    refreshCredentials: (input) => renewLinkedInToken(deps, input),
  };
}

/** LinkedIn's token endpoint, the client credentials in the form. */
async function requestToken(
  deps: AdapterDeps,
  input: {
    form: Record<string, string>;
    idempotent: boolean;
  },
): Promise<Record<string, any>> {
  const response = await linkedinCall({
    deps,
    operation: TOKEN_OPERATION,
    url: `${linkedinApp(deps).tokenBase}/oauth/v2/accessToken`,
    init: {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(input.form),
    },
    idempotent: input.idempotent,
  });
  const token = await expectJson({ operation: TOKEN_OPERATION, response });
  if (typeof token.access_token !== "string" || token.access_token === "")
    throw new ProviderError("transient", "LinkedIn's token answer has no access_token", {
      operation: TOKEN_OPERATION,
    });
  return token;
}

/** The token answer as stored credentials; what it leaves out (a refresh token) is kept from before. */
function credentialsFrom(
  deps: AdapterDeps,
  token: Record<string, any>,
  previous: Partial<LinkedInCredentials> = {},
) {
  const now = deps.clock.now();
  const seconds = (value: unknown) => (typeof value === "number" && value > 0 ? value : null);
  const credentials: LinkedInCredentials = {
    accessToken: token.access_token,
    expiresAt: now + (seconds(token.expires_in) ?? DEFAULT_TOKEN_TTL_S) * 1000,
  };
  const refreshToken =
    typeof token.refresh_token === "string" && token.refresh_token !== ""
      ? token.refresh_token
      : previous.refreshToken;
  if (refreshToken) credentials.refreshToken = refreshToken;
  // Self-serve apps get no refresh token: the credentials job then waits for the expiry itself.
  credentials.renewable = Boolean(refreshToken);
  const refreshTtl = seconds(token.refresh_token_expires_in);
  const refreshExpiresAt = refreshTtl === null ? previous.refreshTokenExpiresAt : now + refreshTtl * 1000;
  if (refreshToken && refreshExpiresAt !== undefined) credentials.refreshTokenExpiresAt = refreshExpiresAt;
  return credentials;
}

/** A GET on the REST API with the given token; its JSON answer. */
async function getJson(
  deps: AdapterDeps,
  input: { origin: string; path: string; token: string; operation: string },
) {
  const response = await linkedinCall({
    deps,
    operation: input.operation,
    url: `${base(input.origin)}${input.path}`,
    init: { headers: restHeaders(deps, input.token) },
    idempotent: true,
  });
  return expectJson({ operation: input.operation, response });
}

/** The pages the member administers (approved ADMINISTRATOR roles), with their names. */
async function administeredPages(deps: AdapterDeps, input: { origin: string; token: string }) {
  const urns: string[] = [];
  const pageSize = 50;
  for (let start = 0; start < 1000; start += pageSize) {
    const query = `q=roleAssignee&role=ADMINISTRATOR&state=APPROVED&start=${start}&count=${pageSize}`;
    const acls = await getJson(deps, {
      ...input,
      path: `/rest/organizationAcls?${query}`,
      operation: "GET /rest/organizationAcls",
    });
    const elements: Record<string, unknown>[] = Array.isArray(acls.elements) ? acls.elements : [];
    for (const acl of elements) {
      const urn = acl.organization ?? acl.organizationalTarget;
      if (acl.role !== "ADMINISTRATOR" || acl.state !== "APPROVED" || typeof urn !== "string") continue;
      if (/^urn:li:organization:\d+$/.test(urn) && !urns.includes(urn)) urns.push(urn);
    }
    const total = typeof acls.paging?.total === "number" ? acls.paging.total : 0;
    if (elements.length === 0 || start + pageSize >= total) break;
  }
  const pages = [];
  for (const urn of urns) {
    const id = urn.slice(LINKEDIN_PAGE_PREFIX.length);
    const organization = await getJson(deps, {
      ...input,
      path: `/rest/organizations/${id}`,
      operation: "GET /rest/organizations/{id}",
    });
    const name = typeof organization.localizedName === "string" ? organization.localizedName : "";
    const vanity = typeof organization.vanityName === "string" ? organization.vanityName : "";
    pages.push({ urn, name: name || `LinkedIn page ${id}`, handle: vanity || id });
  }
  return pages;
}

function base(origin: string): string {
  return origin.replace(/\/+$/, "");
}

/** LinkedIn as the registry lists it. */
export const LINKEDIN_NETWORK: NetworkDefinition = {
  rules: LINKEDIN_RULES,
  // DESIGN.md "Network apps, API origins and storage engines": the documented origins.
  // LinkedIn's token endpoint is on the sign-in host (www.linkedin.com/oauth/v2/accessToken).
  origins: {
    api: "https://api.linkedin.com",
    auth: "https://www.linkedin.com",
    token: "https://www.linkedin.com",
  },
  apiVersion: LINKEDIN_API_VERSION,
  create: createLinkedInAdapter,
};

/** The app settings as the adapter uses them: LinkedIn's origins unless configured, Herald's scopes unless replaced. */
function linkedinApp(deps: AdapterDeps) {
  const configured = deps.apps.linkedin;
  return {
    clientId: configured?.clientId ?? null,
    clientSecret: configured?.clientSecret ?? null,
    authBase: base(configured?.authBase ?? "https://www.linkedin.com"),
    tokenBase: base(configured?.tokenBase ?? "https://www.linkedin.com"),
    scopes: configured?.scopes?.trim() || LINKEDIN_DEFAULT_SCOPES,
  };
}

/** Code → tokens → the member and the pages they administer, one destination each. */
async function connectLinkedInMember(
  deps: AdapterDeps,
  { origin, clientId, clientSecret, redirectUri, code }: Parameters<OAuthAdapter["completeAuthorization"]>[0],
) {
  const token = await requestToken(deps, {
    form: {
      grant_type: "authorization_code",
      code,
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uri: redirectUri,
    },
    idempotent: false, // the code is single-use
  });
  const credentials = credentialsFrom(deps, token);
  const accessToken = credentials.accessToken;
  // LinkedIn lists granted scopes comma-separated; without a list, what was asked for was granted.
  const granted = new Set(String(token.scope ?? linkedinApp(deps).scopes).split(/[\s,]+/));
  const me = await getJson(deps, {
    origin,
    path: "/v2/userinfo",
    token: accessToken,
    operation: "GET /v2/userinfo",
  });
  if (typeof me.sub !== "string" || me.sub === "")
    throw new ProviderError("transient", "LinkedIn's userinfo has no sub", {
      operation: "GET /v2/userinfo",
    });
  const accounts: ConnectedAccount[] = [];
  const limits = { ...LINKEDIN_LIMITS };
  if (granted.has("w_member_social")) {
    accounts.push({
      externalId: `urn:li:person:${me.sub}`,
      handle: me.sub,
      displayName: typeof me.name === "string" && me.name ? me.name : me.sub,
      profileImageUrl: typeof me.picture === "string" ? me.picture : null,
      credentials,
      limits,
    });
  }
  if (granted.has("rw_organization_admin") && granted.has("w_organization_social")) {
    for (const page of await administeredPages(deps, { origin, token: accessToken })) {
      accounts.push({
        externalId: page.urn,
        handle: page.handle,
        displayName: page.name,
        profileImageUrl: null,
        credentials,
        limits,
      });
    }
  }
  return accounts;
}

/** The refresh grant, while the refresh token lives. */
async function renewLinkedInToken(
  deps: AdapterDeps,
  { destination }: Parameters<OAuthAdapter["refreshCredentials"]>[0],
): Promise<Credentials> {
  const stored = destination.credentials as Partial<LinkedInCredentials>;
  const operation = "refreshCredentials";
  if (!stored.refreshToken)
    throw new ProviderError(
      "auth_revoked",
      "LinkedIn gave this connection no refresh token (only apps approved for refresh tokens get one); connect it again",
      { operation },
    );
  if (typeof stored.refreshTokenExpiresAt === "number" && stored.refreshTokenExpiresAt <= deps.clock.now())
    throw new ProviderError("auth_revoked", "the LinkedIn refresh token expired; connect the account again", {
      operation,
    });
  const { clientId, clientSecret } = linkedinApp(deps);
  if (!clientId || !clientSecret)
    throw new ProviderError("not_sent", "HERALD_LINKEDIN_CLIENT_ID and _SECRET are not set", {
      operation,
    });
  const token = await requestToken(deps, {
    form: {
      grant_type: "refresh_token",
      refresh_token: stored.refreshToken,
      client_id: clientId,
      client_secret: clientSecret,
    },
    idempotent: true, // the refresh token does not rotate: asking twice is harmless
  });
  return credentialsFrom(deps, token, stored);
}
