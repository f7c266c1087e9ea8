// Facebook Login, shared by Facebook Pages and Instagram (providers.md §6.1, §5.1): the dialog URL,
// code → short-lived user token → long-lived user token (fb_exchange_token), and the Pages the person
// manages (/me/accounts) with their Page tokens. Page tokens read with a long-lived user token do not
// expire, which is why the exchange matters even though Herald keeps only the Page tokens.
import type { NetworkApp } from "../types.ts";
import { baseOf, graphCall, META_GRAPH_VERSION } from "../facebook/graph.ts";
import { metaGraphCall } from "./graph.ts";
import {
  ProviderError,
  type AdapterDeps,
  type ConnectedAccount,
  type Credentials,
  type OAuthAdapter,
  type ProviderDeps,
} from "../types.ts";

/** Meta's documented origins, used when the registry was built without the channel's app settings. */
export const META_DEFAULT_APP: NetworkApp = {
  clientId: null,
  clientSecret: null,
  apiBase: "https://graph.facebook.com",
  authBase: "https://www.facebook.com",
  tokenBase: "https://graph.facebook.com",
  scopes: null,
};

/** Pages read per /me/accounts call, and the most calls made (a person managing thousands is cut off). */
const PAGE_SIZE = 100;
const MAX_PAGE_CALLS = 20;

/** A Page the person manages, as /me/accounts lists it. */
export interface ManagedPage {
  id: string;
  name: string;
  /** The Page token (does not expire when read with a long-lived user token). */
  accessToken: string;
  /** The Page's vanity name, when it has one. */
  username: string | null;
  pictureUrl: string | null;
  /** The Instagram professional account linked to the Page, when asked for and linked. */
  instagramAccountId: string | null;
}

/** The Login dialog URL: `<authBase>/<version>/dialog/oauth` with the comma-separated scopes. */
export function facebookDialogUrl(input: {
  app: NetworkApp;
  clientId: string;
  redirectUri: string;
  state: string;
  scopes: string;
}): string {
  const query = new URLSearchParams({
    client_id: input.clientId,
    redirect_uri: input.redirectUri,
    state: input.state,
    scope: input.scopes,
    response_type: "code",
  });
  return `${baseOf(input.app.authBase)}/${META_GRAPH_VERSION}/dialog/oauth?${query}`;
}

/**
 * Code → short-lived user token → long-lived user token (about 60 days), both on the token origin.
 * The code is single-use, so its exchange is not idempotent; the second exchange may be repeated.
 */
export async function exchangeCodeForLongLivedToken(input: {
  deps: ProviderDeps;
  app: NetworkApp;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  code: string;
}): Promise<string> {
  const { deps, clientId, clientSecret } = input;
  const tokenUrl = `${baseOf(input.app.tokenBase)}/${META_GRAPH_VERSION}/oauth/access_token`;
  const codeOperation = "GET /oauth/access_token";
  const short = await metaGraphCall({
    deps,
    operation: codeOperation,
    url: `${tokenUrl}?${new URLSearchParams({
      client_id: clientId,
      redirect_uri: input.redirectUri,
      client_secret: clientSecret,
      code: input.code,
    })}`,
    idempotent: false,
  });
  const shortToken = tokenOf(short.body, codeOperation);
  const exchange = "GET /oauth/access_token?grant_type=fb_exchange_token";
  const long = await metaGraphCall({
    deps,
    operation: exchange,
    url: `${tokenUrl}?${new URLSearchParams({
      grant_type: "fb_exchange_token",
      client_id: clientId,
      client_secret: clientSecret,
      fb_exchange_token: shortToken,
    })}`,
    idempotent: true,
  });
  return tokenOf(long.body, exchange);
}

/**
 * Every Page the person manages with a Page token (pages without one cannot be published to and are
 * left out), following the cursor; with `instagram`, each Page's linked Instagram account id.
 */
export async function listManagedPages(input: {
  deps: ProviderDeps;
  origin: string;
  userToken: string;
  instagram: boolean;
}): Promise<ManagedPage[]> {
  const fields = ["id", "name", "access_token", "username", "picture"];
  if (input.instagram) fields.push("instagram_business_account");
  const pages: ManagedPage[] = [];
  let after: string | null = null;
  for (let call = 0; call < MAX_PAGE_CALLS; call++) {
    const { body } = await graphCall({
      deps: input.deps,
      origin: input.origin,
      method: "GET",
      path: "me/accounts",
      params: { fields: fields.join(","), limit: String(PAGE_SIZE), ...(after ? { after } : {}) },
      token: input.userToken,
      operation: "GET /me/accounts",
      idempotent: true,
    });
    for (const entry of Array.isArray(body.data) ? body.data : []) {
      const page = pageOf(entry);
      if (page && !pages.some((p) => p.id === page.id)) pages.push(page);
    }
    // Meta gives `paging.next` only when more follow; the cursor (not Meta's URL) is sent back.
    const cursor = body.paging?.cursors?.after;
    if (!body.paging?.next || typeof cursor !== "string" || cursor === "") break;
    after = cursor;
  }
  return pages;
}

function pageOf(entry: Record<string, any> | null): ManagedPage | null {
  const id = entry?.id;
  const token = entry?.access_token;
  if ((typeof id !== "string" && typeof id !== "number") || typeof token !== "string" || token === "")
    return null;
  const picture = entry?.picture?.data?.url;
  const instagram = entry?.instagram_business_account?.id;
  return {
    id: String(id),
    name: typeof entry?.name === "string" ? entry.name : String(id),
    accessToken: token,
    username: typeof entry?.username === "string" && entry.username !== "" ? entry.username : null,
    pictureUrl: typeof picture === "string" && picture !== "" ? picture : null,
    instagramAccountId:
      typeof instagram === "string" || typeof instagram === "number" ? String(instagram) : null,
  };
}

function tokenOf(body: Record<string, any>, operation: string): string {
  if (typeof body.access_token === "string" && body.access_token !== "") return body.access_token;
  throw new ProviderError("auth_revoked", `${operation}: the answer has no access token`, { operation });
}

/** What differs between the networks connected through Facebook Login (Facebook Pages, Instagram). */
export interface FacebookLoginNetwork {
  /** The channel's app settings, read at each call (`deps.apps.<channel>`, else Meta's defaults). */
  app: () => NetworkApp;
  /** The default scopes, sent comma-separated unless the app's scopes replace them. */
  scopes: readonly string[];
  /** Whether /me/accounts is asked for each Page's linked Instagram account. */
  instagram: boolean;
  /** The destinations the managed Pages become; refuses (`rejected`) when there is none. */
  accountsOf(input: { origin: string; pages: ManagedPage[] }): Promise<ConnectedAccount[]>;
  /** What a renewal says: Page tokens cannot be renewed. */
  renewalRefusal: string;
}

/**
 * The connecting half of a Facebook Login adapter: the dialog (no PKCE: the app secret guards the code
 * exchange), code → long-lived user token → managed Pages → destinations, and a renewal that always
 * refuses, since Page tokens never expire and one Meta refuses (code 190) can only be replaced by
 * connecting again.
 */
export function facebookLoginConnector(
  deps: AdapterDeps,
  network: FacebookLoginNetwork,
): Pick<
  OAuthAdapter,
  "connection" | "refreshAheadMs" | "authorizationUrl" | "completeAuthorization" | "refreshCredentials"
> {
  return {
    connection: { kind: "oauth", registration: "fixed-app" },
    // Page tokens do not expire; there is nothing to renew ahead.
    refreshAheadMs: null,

    authorizationUrl({ clientId, redirectUri, state }) {
      const app = network.app();
      return facebookDialogUrl({
        app,
        clientId,
        redirectUri,
        state,
        scopes: app.scopes ?? network.scopes.join(","),
      });
    },

    async completeAuthorization({ origin, clientId, clientSecret, redirectUri, code }) {
      const userToken = await exchangeCodeForLongLivedToken({
        deps,
        app: network.app(),
        clientId,
        clientSecret,
        redirectUri,
        code,
      });
      const pages = await listManagedPages({ deps, origin, userToken, instagram: network.instagram });
      return network.accountsOf({ origin, pages });
    },

    async refreshCredentials(): Promise<Credentials> {
      throw new ProviderError("auth_revoked", network.renewalRefusal, { operation: "refreshCredentials" });
    },
  };
}
