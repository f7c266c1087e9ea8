import { Elysia } from "elysia";
import type { Herald } from "../../herald.ts";
import { isScope, type Scope } from "../../core/scopes.ts";
import { ProblemError } from "../../core/problem.ts";
import { ROLE_SCOPES } from "../../modules/account/roles.ts";
import { listAccountWorkspacesOldestFirst } from "../../modules/cli-auth/repo.ts";
import { mayManageInstallation } from "../../modules/installation/service.ts";
import {
  approveAuthorization,
  type AuthorizationRequest,
  checkAuthorizationRequest,
  denyAuthorization,
  redirectHost,
  redirectSource,
} from "../../modules/oauth/authorize.ts";
import { registerClient } from "../../modules/oauth/client-registry.ts";
import { OauthError } from "../../modules/oauth/errors.ts";
import { authorizationServerMetadata, protectedResourceMetadata } from "../../modules/oauth/metadata.ts";
import { exchangeToken } from "../../modules/oauth/token.ts";
import { GRANT_TTL_MS } from "../../modules/oauth/tokens.ts";
import { AddressLimiter } from "../../modules/signup/limiter.ts";
import { requireConfirmedAccount } from "../../modules/signup/unconfirmed.ts";
import type { FieldErrors } from "../dashboard/api.ts";
import { dashboardCsp } from "../dashboard/router.ts";
import { consentPage, type ConsentValues } from "../pages/oauth-consent.ts";
import { html } from "../pages/html.ts";
import {
  type Browser,
  browserOf,
  csrfOf,
  formFromThisBrowser,
  pageResponse,
  readForm,
  redirect,
} from "../pages/respond.ts";
import { requestIdOf, type ClientAddress } from "../plugin.ts";
import { FailedAuthLimiter } from "../rate-limit.ts";
import { csrfRefused, formPost, hidden, pageMessage } from "./page-kit.ts";
import { boundedText } from "../../lib/bounded-body.ts";

/** What the OAuth handlers share: Herald, the peer address and the limits of unauthenticated callers. */
interface OauthServer {
  h: Herald;
  clientAddress: ClientAddress;
  /** Client registrations per address an hour (HERALD_SIGNUP_REQUESTS_PER_HOUR, like signup starts). */
  registrations: AddressLimiter;
  /** Failed token requests per address, like failed API keys. */
  tokenFailures: FailedAuthLimiter;
}
type Req = { request: Request };

const MAX_REGISTRATION_BYTES = 16 * 1024;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Herald as the OAuth 2.1 authorization server of its MCP endpoint (docs/oauth.md): the metadata
 * documents, dynamic client registration, the authorization page (sign-in, then consent in the
 * dashboard's frame) and the token endpoint. Answers and errors are OAuth's (RFC 6749, 7591, 8414,
 * 9728), not problem+json: OAuth clients parse them.
 */
export function oauthRoutes(h: Herald, clientAddress: ClientAddress) {
  const o: OauthServer = {
    h,
    clientAddress,
    registrations: new AddressLimiter(
      h.config.signupRequestsPerHour,
      3_600_000,
      "client registrations an hour",
    ),
    tokenFailures: new FailedAuthLimiter(
      h.config.authFailuresPerMinute,
      60_000,
      "failed token requests a minute",
    ),
  };
  const app = new Elysia();
  // Browser-based MCP clients (an inspector in a web page) call these across origins: the metadata
  // with an MCP-Protocol-Version header, registration with JSON, the token endpoint with a form.
  for (const path of CROSS_ORIGIN_PATHS) app.options(path, preflight, hidden);
  return app
    .get(
      "/.well-known/oauth-protected-resource",
      () => metadataResponse(protectedResourceMetadata(h)),
      hidden,
    )
    .get(
      "/.well-known/oauth-protected-resource/mcp",
      () => metadataResponse(protectedResourceMetadata(h)),
      hidden,
    )
    .get(
      "/.well-known/oauth-authorization-server",
      () => metadataResponse(authorizationServerMetadata(h)),
      hidden,
    )
    .post("/oauth/register", (c) => register(o, c), formPost)
    .get("/oauth/authorize", (c) => showAuthorize(o, c), hidden)
    .post("/oauth/authorize", (c) => submitAuthorize(o, c), formPost)
    .post("/oauth/token", (c) => token(o, c), formPost);
}

const CROSS_ORIGIN_PATHS = [
  "/.well-known/oauth-protected-resource",
  "/.well-known/oauth-protected-resource/mcp",
  "/.well-known/oauth-authorization-server",
  "/oauth/register",
  "/oauth/token",
];

/**
 * Any origin may call the metadata, registration and token endpoints (without cookies): they take no
 * ambient credential, so another site gains nothing a server-side client could not do.
 */
const ANY_ORIGIN = { "access-control-allow-origin": "*" };

/** The headers of every registration, token and error answer: never cached, readable across origins. */
const UNCACHED = { "cache-control": "no-store", pragma: "no-cache", ...ANY_ORIGIN };

/** The answer to a CORS preflight of the cross-origin endpoints. */
function preflight(): Response {
  return new Response(null, {
    status: 204,
    headers: {
      ...ANY_ORIGIN,
      "access-control-allow-methods": "GET, POST, OPTIONS",
      "access-control-allow-headers": "content-type, mcp-protocol-version",
      "access-control-max-age": "86400",
    },
  });
}

/** A metadata document: public, cacheable for a while, readable by browser-based clients. */
function metadataResponse(document: object): Response {
  return Response.json(document, {
    headers: { "cache-control": "public, max-age=3600", ...ANY_ORIGIN },
  });
}

/** An OAuth error answer (RFC 6749 §5.2): never cached. */
function oauthErrorResponse(error: OauthError, headers: Record<string, string> = {}): Response {
  return Response.json(
    { error: error.error, error_description: error.description },
    {
      status: error.status,
      headers: { ...UNCACHED, ...headers },
    },
  );
}

/** 429 in OAuth's form, with the wait the limiter named. */
function tooMany(error: ProblemError): Response {
  const retryAfter = String(error.retryAfter ?? 60);
  return oauthErrorResponse(new OauthError("invalid_request", error.detail, 429), {
    "retry-after": retryAfter,
  });
}

async function register(o: OauthServer, { request }: Req) {
  const { h } = o;
  try {
    o.registrations.hit(o.clientAddress(request), h.clock.now());
  } catch (error) {
    if (error instanceof ProblemError) return tooMany(error);
    throw error;
  }
  const type = request.headers.get("content-type") ?? "";
  try {
    if (!/^application\/json\s*(;|$)/i.test(type))
      throw new OauthError("invalid_client_metadata", "Send the metadata as application/json.");
    const text = await boundedText(request, MAX_REGISTRATION_BYTES);
    if (text === null)
      throw new OauthError("invalid_client_metadata", "The registration is larger than 16 KiB.");
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new OauthError("invalid_client_metadata", "The registration is not valid JSON.");
    }
    const client = await registerClient(h, body);
    return Response.json(client, {
      status: 201,
      headers: UNCACHED,
    });
  } catch (error) {
    if (error instanceof OauthError) return oauthErrorResponse(error);
    throw error;
  }
}

async function token(o: OauthServer, { request }: Req) {
  const { h } = o;
  const address = o.clientAddress(request);
  try {
    o.tokenFailures.check(address, h.clock.now());
  } catch (error) {
    if (error instanceof ProblemError) return tooMany(error);
    throw error;
  }
  const form = await readForm(request);
  try {
    const answer = await exchangeToken(h, form, requestIdOf(request));
    return Response.json(answer, {
      headers: UNCACHED,
    });
  } catch (error) {
    if (!(error instanceof OauthError)) throw error;
    if (error.error === "invalid_grant" || error.error === "invalid_client")
      o.tokenFailures.fail(address, h.clock.now());
    return oauthErrorResponse(error);
  }
}

/**
 * The authorization request: a page when the client or redirect URI is wrong, an `error=` redirect for
 * the rest, the sign-in page (coming back here) for a browser without a session, else the consent page.
 */
async function showAuthorize(o: OauthServer, { request }: Req) {
  const { h } = o;
  const browser = await browserOf(h, request);
  const checked = await checkAuthorizationRequest(h, new URL(request.url).searchParams);
  if (checked.kind === "page") return pageMessage(h, browser, 400, checked.heading, [checked.detail]);
  if (checked.kind === "redirect") return redirect(h, browser, checked.location);
  if (!browser.session)
    return redirect(h, browser, `/login?next=${encodeURIComponent(authorizePath(checked.request))}`);
  const scopes = ROLE_SCOPES[browser.session.role];
  // What the client asked for, within the role; everything the role holds when it named nothing.
  const asked = checked.request.scopes.length > 0 ? checked.request.scopes : [...scopes];
  const values = {
    scopes: asked.filter((s) => scopes.includes(s)),
    workspaceAccess: "all",
    workspaceIds: [],
  };
  return consent(o, browser, checked.request, values, new Map(), 200);
}

async function submitAuthorize(o: OauthServer, { request }: Req) {
  const { h } = o;
  const browser = await browserOf(h, request);
  const form = await readForm(request);
  if (!browser.session) return redirect(h, browser, "/login");
  if (!formFromThisBrowser(h, browser, form)) return csrfRefused(h, browser);
  const checked = await checkAuthorizationRequest(h, form);
  if (checked.kind === "page") return pageMessage(h, browser, 400, checked.heading, [checked.detail]);
  if (checked.kind === "redirect") return redirect(h, browser, checked.location);
  const authorization = checked.request;
  const session = browser.session;
  if (form.get("decision") === "deny") return redirect(h, browser, denyAuthorization(h, authorization));
  const values: ConsentValues = {
    scopes: form.getAll("scopes"),
    workspaceAccess: form.get("workspace_access") ?? "",
    workspaceIds: form.getAll("workspace_ids"),
  };
  const workspaces = await listAccountWorkspacesOldestFirst(h.db, session.accountId);
  const errors = consentErrors(values, ROLE_SCOPES[session.role], new Set(workspaces.map((w) => w.id)));
  if (errors.size > 0 || form.get("decision") !== "allow")
    return consent(o, browser, authorization, values, errors, 400);
  try {
    await requireConfirmedAccount(h.db, { accountId: session.accountId });
  } catch (error) {
    if (!(error instanceof ProblemError)) throw error;
    return pageMessage(h, browser, 403, "Confirm your address first", [
      error.detail,
      html`<a href="/dashboard">Go to your account</a> to send the link again.`,
    ]);
  }
  const location = await approveAuthorization(h, authorization, {
    accountId: session.accountId,
    userId: session.userId,
    scopes: values.scopes as Scope[],
    workspaceAccessMode: values.workspaceAccess as "all" | "selected",
    workspaceIds: [...new Set(values.workspaceIds)],
  });
  return redirect(h, browser, location);
}

/** Each choice of the consent form that cannot be granted, at its field. */
function consentErrors(
  values: ConsentValues,
  roleScopes: readonly Scope[],
  workspaceIds: Set<string>,
): FieldErrors {
  const errors: FieldErrors = new Map();
  const beyond = values.scopes.filter((s) => !isScope(s) || !roleScopes.includes(s));
  if (beyond.length > 0) errors.set("/scopes", `your role cannot grant ${beyond.join(", ")}`);
  else if (values.scopes.length === 0) errors.set("/scopes", "choose at least one permission");
  if (values.workspaceAccess !== "all" && values.workspaceAccess !== "selected")
    errors.set("/workspace_access", "choose all workspaces or selected ones");
  else if (values.workspaceAccess === "selected") {
    if (values.workspaceIds.length === 0) errors.set("/workspace_ids", "choose at least one workspace");
    else if (values.workspaceIds.some((id) => !workspaceIds.has(id)))
      errors.set("/workspace_ids", "names a workspace that is not yours");
  }
  return errors;
}

/** The consent page for a checked request (its form leads to the client's redirect URI: CSP says so). */
async function consent(
  o: OauthServer,
  browser: Browser,
  authorization: AuthorizationRequest,
  values: ConsentValues,
  errors: FieldErrors,
  status: number,
): Promise<Response> {
  const { h } = o;
  const session = browser.session!;
  const workspaces = (await listAccountWorkspacesOldestFirst(h.db, session.accountId)).map((w) => ({
    id: w.id,
    name: w.name,
    // The consent page's navigation shows names only.
    timeZone: "",
    tracksLinks: false,
  }));
  const csrf = csrfOf(h, browser);
  const page = consentPage(
    {
      title: `Allow ${authorization.client.clientName}`,
      email: session.email,
      role: session.role,
      accountName: session.accountName,
      csrf,
      workspace: null,
      workspaces,
      section: null,
      serverSettings: await mayManageInstallation(h, session),
    },
    {
      clientName: authorization.client.clientName,
      redirectHost: redirectHost(authorization.redirectUri),
      clientSource: authorization.client.source,
      clientId: authorization.client.id,
      grantDays: GRANT_TTL_MS / DAY_MS,
      roleScopes: ROLE_SCOPES[session.role],
      workspaces,
      params: authorization.params,
      values,
      errors,
    },
  );
  return pageResponse(h, browser, page, {
    status,
    headers: { "content-security-policy": dashboardCsp([redirectSource(authorization.redirectUri)]) },
  });
}

/**
 * The authorization request as a local path for the sign-in page's `next`: every parameter
 * percent-encoded but letters, digits and `_.-`, the only characters `localPath` lets through.
 */
function authorizePath(authorization: AuthorizationRequest): string {
  const strict = (s: string) =>
    [...new TextEncoder().encode(s)]
      .map((b) =>
        /[A-Za-z0-9_.-]/.test(String.fromCharCode(b))
          ? String.fromCharCode(b)
          : `%${b.toString(16).toUpperCase().padStart(2, "0")}`,
      )
      .join("");
  const query = Object.entries(authorization.params)
    .map(([name, value]) => `${name}=${strict(value)}`)
    .join("&");
  return `/oauth/authorize?${query}`;
}
