import { Elysia } from "elysia";
import { docsUrl, type Herald } from "./herald.ts";
import { fieldErrorsFromSchemaIssues } from "./http/validation.ts";
import { readJsonBody } from "./http/body-limit.ts";
import { AllowedMethods } from "./http/methods.ts";
import {
  answeredRequestIdOf,
  clientRequestIdOf,
  heraldPlugin,
  JSON_PARSER,
  requestIdOf,
  setRequestIds,
  setRoute,
} from "./http/plugin.ts";
import type { ClientAddress } from "./http/plugin.ts";
import { ProblemError, problemResponse } from "./core/problem.ts";
import { storageFault, storageProblem } from "./core/storage-problem.ts";
import { FailedAuthLimiter, RateLimiter } from "./http/rate-limit.ts";
import { checkNoNul, checkQueryRepeats, checkRequestHead } from "./http/request-head.ts";
import { clientRequestIdFrom, newRequestId } from "./http/request-id.ts";
import type { Scheduler } from "./jobs/scheduler.ts";
import { accountRoutes } from "./http/routes/account.ts";
import { assetRoutes, assetTransferRoutes } from "./http/routes/assets.ts";
import { auditRoutes } from "./http/routes/audit.ts";
import { invitationRoutes } from "./http/routes/invitations.ts";
import { systemRoutes } from "./http/routes/system.ts";
import { workspaceRoutes } from "./http/routes/workspaces.ts";
import { requireWorkspace } from "./modules/workspaces/service.ts";
import { analyticsRoutes } from "./http/routes/analytics.ts";
import { destinationRoutes, oauthCallbackRoutes } from "./http/routes/destinations.ts";
import { postRoutes } from "./http/routes/posts.ts";
import { approvalRoutes } from "./http/routes/approvals.ts";
import { postImportRoutes } from "./http/routes/post-imports.ts";
import { postLinkRoutes, shortLinkRoutes } from "./http/routes/links.ts";
import type { PublishingEngine } from "./modules/publishing/engine.ts";
import { webhookRoutes } from "./http/routes/webhooks.ts";
import { signupRoutes } from "./http/routes/signup.ts";
import { pageRoutes } from "./http/routes/pages.ts";
import { oauthRoutes } from "./http/routes/oauth.ts";
import { reviewPageRoutes } from "./http/routes/review-page.ts";
import { passwordResetRoutes } from "./http/routes/password-reset.ts";
import { dashboardRoutes } from "./http/dashboard/index.ts";
import { teamRoutes } from "./http/routes/team.ts";
import { billingRoutes } from "./http/routes/billing.ts";
import { mcpRoutes, type McpDeps } from "./http/routes/mcp.ts";

/** Maps any error raised while handling a request to the problem it becomes. */
function toProblem(code: string | number, error: unknown): ProblemError | null {
  if (error instanceof ProblemError) return error;
  const cause = (error as { cause?: unknown })?.cause;
  if (cause instanceof ProblemError) return cause;
  if (code === "VALIDATION") {
    const validation = error as { type?: string; all?: Parameters<typeof fieldErrorsFromSchemaIssues>[0] };
    const location = validation.type ?? "body";
    const errors = fieldErrorsFromSchemaIssues(validation.all ?? [], location);
    const where =
      location === "body"
        ? "The request body"
        : location === "query"
          ? "The query string"
          : location === "params"
            ? "The path"
            : "The request headers";
    return new ProblemError(
      "public_invalid_request",
      `${where} does not match the contract: ${errors.map((e) => `${e.pointer || "(root)"} ${e.detail}`).join("; ")}.`,
      { errors },
    );
  }
  if (code === "PARSE") {
    return new ProblemError("public_invalid_request", "The request body is not valid JSON.", {
      errors: [{ pointer: "", code: "custom", detail: "is not valid JSON" }],
    });
  }
  if (code === "NOT_FOUND") return new ProblemError("public_not_found", "No such route.");
  return null;
}

/** 405 with Allow when routes answer other methods on the path; null when none has the path. */
function methodNotAllowed(allowed: AllowedMethods, method: string, path: string): ProblemError | null {
  const methods = allowed.of(path);
  if (methods.length === 0 || methods.includes(method)) return null;
  const allow = methods.join(", ");
  const detail = `${method} is not an operation of ${path}; it supports ${allow}.`;
  return new ProblemError("public_method_not_allowed", detail, { headers: { allow } });
}

/** What the server supplies: the scheduler and engine for /health, and each request's client address. */
export interface AppOptions {
  scheduler?: () => Scheduler | null;
  engine?: () => PublishingEngine | null;
  /** The peer address of a request's connection (keys the failed-authentication limit). */
  clientAddress?: ClientAddress;
}

/** An Elysia app of any shape (the routes' types are not followed across the build steps). */
type AnyApp = Elysia<any, any, any, any, any, any, any>;

/** Builds the whole HTTP application (routes under /v1, /health, docs) around one Herald value. */
export function buildApp(h: Herald, options: AppOptions = {}) {
  const clientAddress = options.clientAddress ?? (() => "unknown");
  // One limit of failed authentications per address, for the API's rails and the MCP endpoint alike.
  const failures = new FailedAuthLimiter(h.config.authFailuresPerMinute);
  const rails = heraldPlugin(
    h,
    new RateLimiter(h.config.rateLimitPerMinute),
    (auth, workspaceId) => requireWorkspace(h.db, auth, workspaceId),
    failures,
    clientAddress,
  );
  const allowed = new AllowedMethods(() => app.routes);
  // The path starts after `http://` (Bun serves plain HTTP; server.ts makes every URL absolute). The
  // default looks from index 11, which skips the start of the path when the Host is 3 characters or less.
  const app: AnyApp = new Elysia({
    normalize: false,
    handler: { standardHostname: false },
  })
    .onRequest(({ request, set }) => startRequest(request, set.headers))
    .onTransform({ as: "global" }, ({ request, route }) => setRoute(request, route))
    // Named parts, not the context whole: Elysia reads every hook's source, and a global hook taking the
    // context whole makes every route copy the headers and parse cookies (~5% of Create Post).
    .onError({ as: "global" }, ({ code, error, request, route, path }) =>
      errorResponse(h, allowed, { code, error, request, route, path }),
    )
    .parser(JSON_PARSER, ({ request }) => readJsonBody(request));
  const mcp: McpDeps = { handle: (request) => app.handle(request), failures, clientAddress };
  return mountRoutes(app, h, rails, options, clientAddress, mcp);
}

/**
 * Every request: its ids (Herald's own, and the caller's Service-Request-Id, which is echoed in the
 * answer as the contract says), then the checks of its head and URL.
 */
function startRequest(request: Request, headers: Record<string, unknown>): void {
  const client = clientRequestIdFrom(request.headers.get("service-request-id"));
  setRequestIds(request, { own: newRequestId(), client });
  headers["service-request-id"] = answeredRequestIdOf(request);
  checkRequestHead(request);
  checkQueryRepeats(request.url);
  checkNoNul(request.url);
}

/** What failed in a request, as Elysia hands it to `onError`. */
interface RequestFailure {
  code: string | number;
  error: unknown;
  request: Request;
  route: string;
  path: string;
}

/** The problem document answering any error of a request (405, 4xx problems, 503, else 500). */
function errorResponse(h: Herald, allowed: AllowedMethods, failure: RequestFailure): Response {
  const { code, error, request, route, path } = failure;
  const requestId = answeredRequestIdOf(request);
  const ids = { request_id: requestIdOf(request), client_request_id: clientRequestIdOf(request) };
  if (route) setRoute(request, route);
  const wrongMethod = code === "NOT_FOUND" ? methodNotAllowed(allowed, request.method, path) : null;
  const problem = wrongMethod ?? toProblem(code, error);
  if (problem) return problemResponse(problem, requestId, docsUrl(h));
  // A full or read-only disk, or a database away: 503 naming the cause, and one clear log line.
  const unavailable = storageProblem(error, h.config.dataDir);
  if (unavailable) {
    h.logger.error("storage unavailable", {
      ...ids,
      route: route || "(no route)",
      fault: storageFault(error, h.config.dataDir),
      error: error instanceof Error ? error.message : String(error),
    });
    return problemResponse(unavailable, requestId, docsUrl(h));
  }
  h.logger.error("unhandled error", {
    ...ids,
    method: request.method,
    // The route pattern, not the path: page paths carry one-time tokens (/signup/{token}).
    route: route || "(no route)",
    error: error instanceof Error ? (error.stack ?? error.message) : String(error),
  });
  return problemResponse(
    new ProblemError(
      "public_internal_error",
      "Something went wrong on our side. Quote the request id when reporting it.",
    ),
    requestId,
    docsUrl(h),
  );
}

/** Every route file, in the order they are matched: pages and the dashboard first, then the API under /v1. */
function mountRoutes(
  app: AnyApp,
  h: Herald,
  rails: ReturnType<typeof heraldPlugin>,
  options: AppOptions,
  clientAddress: ClientAddress,
  mcp: McpDeps,
): AnyApp {
  return app
    .use(
      systemRoutes(
        h,
        { scheduler: options.scheduler ?? (() => null), engine: options.engine ?? (() => null) },
        () => app,
      ),
    )
    .use(oauthCallbackRoutes(h))
    .use(assetTransferRoutes(h))
    .use(pageRoutes(h, clientAddress))
    .use(shortLinkRoutes(h, clientAddress))
    .use(oauthRoutes(h, clientAddress))
    .use(passwordResetRoutes(h, clientAddress))
    .use(reviewPageRoutes(h, clientAddress))
    .use(dashboardRoutes(h, (request) => app.handle(request)))
    .use(teamRoutes(h, rails))
    .use(billingRoutes(h, rails))
    .use(mcpRoutes(h, mcp))
    .group("/v1", (v1) =>
      v1
        .use(signupRoutes(h, rails, clientAddress))
        .use(accountRoutes(h, rails))
        .use(workspaceRoutes(h, rails))
        .use(invitationRoutes(h, rails))
        .use(auditRoutes(h, rails))
        .use(destinationRoutes(h, rails))
        .use(postRoutes(h, rails))
        .use(approvalRoutes(h, rails))
        .use(postImportRoutes(h, rails))
        .use(postLinkRoutes(h, rails))
        .use(assetRoutes(h, rails))
        .use(webhookRoutes(h, rails))
        .use(analyticsRoutes(h, rails)),
    );
}
