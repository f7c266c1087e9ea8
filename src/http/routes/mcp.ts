import type { AuthInfo, McpHttpHandler } from "@modelcontextprotocol/server";
import { Elysia } from "elysia";
import type { Herald } from "../../herald.ts";
import { docsUrl } from "../../herald.ts";
import type { Actor } from "../../core/actor.ts";
import { ProblemError, problemResponse } from "../../core/problem.ts";
import { authenticate } from "../auth.ts";
import { markMcpDispatch } from "../mcp-dispatch.ts";
import { answeredRequestIdOf, requestIdOf, type ClientAddress } from "../plugin.ts";
import type { FailedAuthLimiter } from "../rate-limit.ts";
import type { ApiAnswer, ApiClient, ApiRequest, ToolCaller } from "../mcp/tools.ts";
import { publicHandler } from "./context.ts";
import { answerOf, apiRequestOf } from "../mcp-wire.ts";

/** What the MCP endpoint needs of the app: its in-process handler, and the failed-authentication limit. */
export interface McpDeps {
  handle: (request: Request) => Promise<Response>;
  failures: FailedAuthLimiter;
  clientAddress: ClientAddress;
}

/** The origin in-process requests are addressed to (never resolved: the app handles them itself). */
const IN_PROCESS_ORIGIN = "http://herald.internal";

/** Query parameters that would carry a credential: refused, so no key or token ever sits in a URL. */
const URL_CREDENTIALS = ["key", "api_key", "apikey", "access_token", "token"];

/** Largest MCP request body: upload_media's 1 MiB in base64 (4/3) plus the JSON-RPC around it. */
const MAX_MCP_BODY_BYTES = 2 * 1024 * 1024;

/** What `serveMcp` hands the package with each request: the verified caller and its way to the API. */
interface McpCaller {
  caller: ToolCaller;
  api: ApiClient;
}

/**
 * The package's handler, made on the first MCP request (a server nobody asks over MCP never loads the
 * package). It holds nothing of a caller: each request's server is built from that request's caller.
 */
let handler: Promise<McpHttpHandler> | null = null;

function mcpHandler(): Promise<McpHttpHandler> {
  handler ??= Promise.all([import("@modelcontextprotocol/server"), import("../mcp/server.ts")]).then(
    ([{ createMcpHandler }, { buildMcpServer }]) =>
      createMcpHandler(
        (ctx) => {
          const verified = ctx.authInfo?.extra as McpCaller | undefined;
          // Every request reaches the factory authenticated (serveMcp); none without is ever served.
          if (!verified) throw new Error("an MCP request without its verified caller");
          return buildMcpServer(verified.caller, verified.api);
        },
        { maxRequestBodySize: MAX_MCP_BODY_BYTES },
      ),
  );
  return handler;
}

/** 400 when the URL carries a credential: keys and tokens travel in Authorization only. */
function refuseUrlCredentials(url: string): void {
  const query = new URL(url).searchParams;
  const found = URL_CREDENTIALS.find((name) => query.has(name));
  if (found === undefined) return;
  throw new ProblemError(
    "public_invalid_request",
    "Credentials never go in a URL: send the key or token as `Authorization: Bearer <credential>`.",
    { errors: [{ pointer: "", code: "custom", detail: "must not be in the URL", parameter: found }] },
  );
}

/**
 * The caller of an MCP request, from its bearer credential: a missing or refused one is 401 with the
 * challenge that names the protected-resource metadata (how an assistant finds Herald's sign-in), and
 * counts against the address's failed authentications as the API's do.
 */
async function authenticateCaller(h: Herald, deps: McpDeps, request: Request): Promise<Actor> {
  const authorization = request.headers.get("authorization");
  // `mcpResource`: this is the MCP resource, whose credentials include OAuth grants' access tokens
  // (auth.ts accepts those only here and in the requests this endpoint dispatches).
  const input = {
    authorization,
    required: "authenticated" as const,
    requestId: requestIdOf(request),
    mcpResource: true,
  };
  try {
    const found = await authenticate(h, input);
    return found.actor;
  } catch (error) {
    if (!(error instanceof ProblemError) || error.status !== 401) throw error;
    const address = deps.clientAddress(request);
    const now = h.clock.now();
    deps.failures.check(address, now);
    deps.failures.fail(address, now);
    throw error;
  }
}

/**
 * The tools' way to the API from `/mcp`: each request goes through the app in-process with the
 * caller's own Authorization header, marked as the MCP endpoint's, so validation, scopes, problems,
 * idempotency, rate limits and audit are the API's own.
 */
function inProcessApi(h: Herald, deps: McpDeps, outer: Request): ApiClient {
  const authorization = outer.headers.get("authorization")!;
  const clientRequestId = outer.headers.get("service-request-id");
  return {
    async send(call: ApiRequest) {
      const headers: Record<string, string> = { authorization };
      if (clientRequestId) headers["service-request-id"] = clientRequestId;
      const request = apiRequestOf(`${IN_PROCESS_ORIGIN}/v1`, call, headers);
      return answerOf(await deps.handle(markMcpDispatch(request)));
    },
    async upload(url, headers, bytes) {
      // A part on local storage is Herald's own signed URL: handled in-process too. S3's goes out.
      const own = `${h.config.baseUrl}/`;
      if (!url.startsWith(own)) return answerOf(await fetch(url, { method: "PUT", headers, body: bytes }));
      const request = new Request(`${IN_PROCESS_ORIGIN}/${url.slice(own.length)}`, {
        method: "PUT",
        headers,
        body: bytes,
      });
      return answerOf(await deps.handle(markMcpDispatch(request)));
    },
    problem: (problem) => answerOf(problemResponse(problem, answeredRequestIdOf(outer), docsUrl(h))),
  };
}

/** POST, GET and DELETE /mcp: authenticate, then the package serves the caller's tools. */
async function serveMcp(h: Herald, deps: McpDeps, request: Request): Promise<Response> {
  refuseUrlCredentials(request.url);
  const actor = await authenticateCaller(h, deps, request);
  const verified: McpCaller = {
    caller: { scopes: actor.scopes, environment: actor.environment },
    api: inProcessApi(h, deps, request),
  };
  // The token stays in the request's header, which the tools' API calls carry; it is not copied here.
  const authInfo: AuthInfo = {
    token: "",
    clientId: actor.credentialId,
    scopes: [...actor.scopes],
    extra: { ...verified },
  };
  return (await mcpHandler()).fetch(request, { authInfo });
}

/**
 * What every answer of /mcp carries for browser-based MCP clients (an inspector in a web page): any
 * origin may read it, as the OAuth endpoints' answers. The credential travels in a header a page of
 * another origin cannot take from the browser (no cookie is read here), so this lets a page use only
 * the credential it already holds. The challenge and the protocol's headers are readable too.
 */
const CROSS_ORIGIN: Record<string, string> = {
  "access-control-allow-origin": "*",
  "access-control-expose-headers":
    "www-authenticate, mcp-session-id, mcp-protocol-version, service-request-id",
};

/** The answer with CROSS_ORIGIN's headers added. */
function readableAcrossOrigins(response: Response): Response {
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(CROSS_ORIGIN)) headers.set(name, value);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

/** serveMcp, with its answers (problems included: 400, 401) readable across origins. */
async function serveMcpAcrossOrigins(h: Herald, deps: McpDeps, request: Request): Promise<Response> {
  try {
    return readableAcrossOrigins(await serveMcp(h, deps, request));
  } catch (error) {
    if (!(error instanceof ProblemError)) throw error;
    return readableAcrossOrigins(problemResponse(error, answeredRequestIdOf(request), docsUrl(h)));
  }
}

/** The CORS preflight of /mcp: the methods, and the headers an MCP client sends. */
function mcpPreflight(): Response {
  return new Response(null, {
    status: 204,
    headers: {
      ...CROSS_ORIGIN,
      "access-control-allow-methods": "POST, GET, DELETE, OPTIONS",
      "access-control-allow-headers":
        "authorization, content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id, service-request-id",
      "access-control-max-age": "86400",
    },
  });
}

/**
 * `<origin>/mcp`: the Model Context Protocol over Streamable HTTP (stateless; docs/mcp.md). Outside
 * the rails: it authenticates itself (401 with the OAuth challenge), and each tool's call of the API
 * goes through the rails in-process.
 */
export function mcpRoutes(h: Herald, deps: McpDeps) {
  const serve = publicHandler(h, (h, { request }) => serveMcpAcrossOrigins(h, deps, request));
  const options = { parse: "none" as const, detail: { hide: true } };
  return new Elysia()
    .post("/mcp", serve, options)
    .get("/mcp", serve, options)
    .delete("/mcp", serve, options)
    .options("/mcp", mcpPreflight, options);
}
