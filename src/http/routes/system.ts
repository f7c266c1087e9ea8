import { KindGuard, type TSchema } from "@sinclair/typebox";
import { Elysia } from "elysia";
// The package exports no path to its browser bundle, so it is imported by file (embedded by bun build).
// @ts-ignore: a file import yields its path; the bundle has no type declarations.
import scalarBundlePath from "../../../node_modules/@scalar/api-reference/dist/browser/standalone.js" with {
  type: "file",
};
import { iso } from "../../lib/clock.ts";
import { docsUrl, type Herald } from "../../herald.ts";
import { documentOperation, documentTags, nameSchemas, operation, ProblemSchema } from "../docs.ts";
import { JSON_PARSER } from "../plugin.ts";
import { problemCatalog } from "../../core/problem.ts";
import type { Scheduler } from "../../jobs/scheduler.ts";
import type { PublishingEngine } from "../../modules/publishing/engine.ts";
import { healthReport } from "../../modules/health/health.ts";
import { scrape } from "../../modules/metrics/scrape.ts";
import { safeEqual } from "../../lib/crypto.ts";
import { html, Markup } from "../pages/html.ts";

/**
 * Adds the parts toOpenAPISchema cannot know: info, servers, the bearer scheme, problem responses and
 * headers, and the named component schemas (every titled route schema, `nameSchemas`).
 */
function completeDocument(
  h: Herald,
  routeSchemas: { paths: Record<string, unknown>; components: { schemas: Record<string, unknown> } },
  optionalBodies: Set<string> = new Set(),
) {
  // A copy: the generator hands out the routes' own schema objects, which the document must not change.
  const generated: typeof routeSchemas = JSON.parse(JSON.stringify(routeSchemas));
  const paths: Record<string, unknown> = {};
  for (const [path, item] of Object.entries(generated.paths)) {
    // Documents the API relative to its base `<origin>/v1`, as the contract writes paths.
    if (!path.startsWith("/v1/")) continue;
    for (const [method, op] of Object.entries(item as Record<string, Record<string, any>>)) {
      documentOperation(op, method, path.slice(3));
      // The generator marks every body required, also one the route lets a request leave out.
      if (op.requestBody && optionalBodies.has(`${method.toUpperCase()} ${path}`))
        op.requestBody.required = false;
    }
    paths[path.slice(3)] = item;
  }
  const named: Record<string, unknown> = { ...generated.components.schemas };
  nameSchemas(ProblemSchema, named);
  const namedPaths = nameSchemas(paths, named) as Record<string, unknown>;
  const schemas = Object.fromEntries(
    Object.keys(named)
      .sort()
      .map((name) => [name, named[name]]),
  );
  return {
    openapi: "3.1.0",
    info: {
      title: "Herald API",
      // The program's version (`herald version`, /health): the document describes this server.
      version: h.version,
      description:
        "Self-hosted social publishing. Errors are application/problem+json; see the error reference " +
        `(${h.config.baseUrl}/v1/docs/reference/errors).`,
      license: { name: "MIT", identifier: "MIT" },
    },
    servers: [{ url: `${h.config.baseUrl}/v1`, description: "This Herald server" }],
    tags: documentTags(namedPaths),
    paths: namedPaths,
    components: {
      schemas,
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "An API key: hk_live_… or hk_test_…" },
      },
    },
  };
}

type AnyElysia = Elysia<any, any, any, any, any, any, any>;

/**
 * Scalar's settings: nothing leaves this server. No web fonts or telemetry, and none of the buttons that
 * lead to Scalar's hosted services: the "Ask AI" agent, "Generate MCP", and the developer tools'
 * "Deploy" and "Share" (shown on localhost by default). "Test request" starts with the bearer scheme
 * (an API key) selected.
 */
export const DOCS_UI_CONFIG = {
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: "never",
  authentication: { preferredSecurityScheme: "bearer" },
};

/**
 * The app as the OpenAPI generator reads it, with Herald's size-limited JSON parser presented under
 * the built-in name `json`: the generator only knows built-in parser names and would otherwise
 * document every request body with no media type at all.
 */
function withJsonParserNamed(app: AnyElysia): AnyElysia {
  const rename = (parsers: unknown) =>
    Array.isArray(parsers)
      ? parsers.map((p: { fn?: unknown }) => (p?.fn === JSON_PARSER ? { ...p, fn: "json" } : p))
      : parsers;
  // The two (protected) methods toOpenAPISchema reads.
  const source = app as unknown as {
    getGlobalDefinitions(): unknown;
    getGlobalRoutes(): { hooks?: { parse?: unknown } }[];
  };
  return {
    getGlobalDefinitions: () => source.getGlobalDefinitions(),
    getGlobalRoutes: () =>
      source
        .getGlobalRoutes()
        .map((route) =>
          route.hooks?.parse
            ? { ...route, hooks: { ...route.hooks, parse: rename(route.hooks.parse) } }
            : route,
        ),
  } as unknown as AnyElysia;
}

/**
 * The OpenAPI document, made on its first request and then cached: the generator (@elysiajs/openapi
 * and what it imports) is not loaded at start.
 */
async function openApiDocument(h: Herald, app: AnyElysia) {
  const { toOpenAPISchema } = await import("@elysiajs/openapi");
  return completeDocument(h, toOpenAPISchema(withJsonParserNamed(app)) as never, optionalBodies(app));
}

/** `POST /v1/billing/portal-sessions`…: the routes whose body is `t.Optional(…)` (may be left out). */
function optionalBodies(app: AnyElysia): Set<string> {
  const routes = (
    app as unknown as {
      getGlobalRoutes(): { method: string; path: string; hooks?: { body?: TSchema } }[];
    }
  ).getGlobalRoutes();
  return new Set(
    routes
      .filter((route) => route.hooks?.body !== undefined && KindGuard.IsOptional(route.hooks.body))
      .map((route) => `${route.method.toUpperCase()} ${route.path.replace(/:(\w+)/g, "{$1}")}`),
  );
}

interface SystemParts {
  scheduler: () => Scheduler | null;
  engine: () => PublishingEngine | null;
}

async function health(h: Herald, parts: SystemParts, { set }: { set: { status?: number | string } }) {
  const { status, body } = await healthReport(h, { scheduler: parts.scheduler(), engine: parts.engine() });
  set.status = status;
  return body;
}

/** Prometheus text; behind HERALD_METRICS_TOKEN when it is set. */
async function metrics(h: Herald, parts: SystemParts, { request }: { request: Request }) {
  const token = h.config.metricsToken;
  const given = request.headers.get("authorization") ?? "";
  if (token !== null && !safeEqual(given, `Bearer ${token}`))
    return new Response("metrics need the bearer token HERALD_METRICS_TOKEN\n", {
      status: 401,
      headers: { "content-type": "text/plain; charset=utf-8", "www-authenticate": "Bearer" },
    });
  return new Response(await scrape(h, parts.scheduler()), {
    headers: {
      "content-type": "text/plain; version=0.0.4; charset=utf-8",
      "cache-control": "no-store",
    },
  });
}

/**
 * Headers of the docs page: Scalar's bundle runs from this server only (no inline script: the
 * configuration sits in a data attribute of an empty script element), and it injects its own styles
 * (inline `<style>` and `style` attributes), shows images and fonts as data: or blob: URLs and calls
 * this server for the document and "Test request". Never framed, nothing sniffed.
 */
const DOCS_PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; " +
    "font-src 'self' data:; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

/** The error reference: a static page whose only style is its own `<style>`. */
const ERROR_PAGE_HEADERS = {
  ...DOCS_PAGE_HEADERS,
  "content-security-policy":
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
};

/** The offline docs UI: Scalar's bundle, served from here, reading /v1/openapi.json. */
function docsPage() {
  return new Response(
    html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Herald API reference</title></head>
<body><script id="api-reference" data-url="/v1/openapi.json" data-configuration="${JSON.stringify(DOCS_UI_CONFIG)}"></script>
<script src="/v1/docs/assets/api-reference.js"></script></body></html>`.text,
    { headers: DOCS_PAGE_HEADERS },
  );
}

function docsBundle() {
  return new Response(Bun.file(scalarBundlePath), {
    headers: {
      "content-type": "text/javascript; charset=utf-8",
      "cache-control": "public, max-age=86400",
      "x-content-type-options": "nosniff",
    },
  });
}

const ERROR_PAGE_STYLE = new Markup(
  "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto}" +
    "td,th{padding:.3rem .6rem;border-bottom:1px solid #ddd;text-align:left}:target{background:#ffd}",
);

/** Every problem code of the catalog, one row each (problem `type`s link to their row). */
function errorReference(h: Herald) {
  const cell = (value: unknown) => html`<td>${value}</td>`;
  const rows = Object.entries(problemCatalog).map(
    ([code, e], i) =>
      html`${i > 0 ? "\n" : ""}<tr id="${code}"><td><code>${code}</code></td>${[
        e.status,
        e.title,
        e.category ?? "—",
        e.userAction ?? "—",
      ].map(cell)}</tr>`,
  );
  const reference = html`API reference: <a href="${docsUrl(h)}">${docsUrl(h)}</a>.`;
  const intro = html`<p>Every error is <code>application/problem+json</code>; <code>type</code> links here. ${reference}</p>`;
  return new Response(
    html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Herald error codes</title>
<style>${ERROR_PAGE_STYLE}</style></head>
<body><h1>Error codes</h1>${intro}
<table><tr><th>code</th><th>status</th><th>title</th><th>category</th><th>user_action</th></tr>
${rows}</table></body></html>`.text,
    { headers: ERROR_PAGE_HEADERS },
  );
}

const hidden = { detail: { hide: true } };

/** Health, the OpenAPI document, the offline docs page and the error reference. */
export function systemRoutes(h: Herald, parts: SystemParts, app: () => AnyElysia) {
  let document: Promise<unknown> | null = null;
  // Made on the first request and kept; a failure is not kept (the next request tries again).
  const openApi = () =>
    (document ??= openApiDocument(h, app()).catch((error: unknown) => {
      document = null;
      throw error;
    }));
  return new Elysia()
    .get("/health", (c) => health(h, parts, c), hidden)
    .get("/metrics", (c) => metrics(h, parts, c), hidden)
    .get(
      "/v1/openapi.json",
      openApi,
      operation({
        scope: null,
        operationId: "getOpenApiDocument",
        summary: "This OpenAPI 3.1 document",
        description:
          "This document, public: every operation with a description, its named schemas " +
          "(components.schemas) and an example body for each one that takes a body. `info.version` " +
          "is the server's version.",
        tag: "Meta",
      }),
    )
    .get("/v1/docs", docsPage, hidden)
    .get("/v1/docs/assets/api-reference.js", docsBundle, hidden)
    .get("/v1/docs/reference/errors", () => errorReference(h), hidden);
}
