import { Elysia } from "elysia";
// The package exports no path to its browser bundle, so it is imported by file (embedded by bun build).
// @ts-ignore: a file import yields its path; the bundle has no type declarations.
import scalarBundlePath from "../../../node_modules/@scalar/api-reference/dist/browser/standalone.js" with {
  type: "file",
};
import { iso } from "../../lib/clock.ts";
import { docsUrl, type Herald } from "../../herald.ts";
import { documentOperation, operation, ProblemSchema } from "../docs.ts";
import { JSON_PARSER } from "../plugin.ts";
import { problemCatalog } from "../../core/problem.ts";
import type { Scheduler } from "../../jobs/scheduler.ts";
import { countPendingMail } from "../../modules/mail/outbox.ts";
import { dueWork } from "../../modules/posts/repo.ts";
import { webhookBacklog } from "../../modules/webhooks/repo.ts";
import type { PublishingEngine } from "../../modules/publishing/engine.ts";
import { engineOf } from "../../db/engine.ts";

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Adds the parts toOpenAPISchema cannot know: info, servers, the bearer scheme, the Problem schema. */
function completeDocument(
  h: Herald,
  generated: { paths: Record<string, unknown>; components: { schemas: Record<string, unknown> } },
) {
  const paths: Record<string, unknown> = {};
  for (const [path, item] of Object.entries(generated.paths)) {
    // Documents the API relative to its base `<origin>/v1`, as the contract writes paths.
    if (!path.startsWith("/v1/")) continue;
    for (const op of Object.values(item as Record<string, Record<string, unknown>>)) documentOperation(op);
    paths[path.slice(3)] = item;
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Herald API",
      version: "1.0.0",
      description:
        "Self-hosted social publishing. Errors are application/problem+json; see the error reference.",
      "x-herald-version": h.version,
    },
    servers: [{ url: `${h.config.baseUrl}/v1` }],
    paths,
    components: {
      schemas: { ...generated.components.schemas, Problem: ProblemSchema },
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "An API key: hk_live_… or hk_test_…" },
      },
    },
  };
}

type AnyElysia = Elysia<any, any, any, any, any, any, any>;

/** The docs UI works offline: no web fonts from the vendor's CDN, no telemetry. */
const DOCS_UI_CONFIG = { withDefaultFonts: false, telemetry: false };

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
  return completeDocument(h, toOpenAPISchema(withJsonParserNamed(app)) as never);
}

/** Health, the OpenAPI document, the offline docs page and the error reference. */
export function systemRoutes(
  h: Herald,
  parts: { scheduler: () => Scheduler | null; engine: () => PublishingEngine | null },
  app: () => AnyElysia,
) {
  let document: Promise<unknown> | null = null;
  return new Elysia()
    .get(
      "/health",
      async () => {
        const jobs = parts.scheduler()?.report() ?? [];
        const engine = parts.engine()?.status() ?? null;
        const now = h.clock.now();
        const due = await dueWork(h.db, now);
        const backlog = await webhookBacklog(h.db);
        const database = await engineOf(h.db)
          .ping()
          .then(() => "ok" as const)
          .catch(() => "error" as const);
        return {
          status: "ok",
          version: h.version,
          time: iso(h.clock.now()),
          database,
          jobs: jobs.map((j) => ({
            id: j.id,
            last_started_at: iso(j.last_started_at),
            last_finished_at: iso(j.last_finished_at),
            failed: j.last_error !== null,
          })),
          mail_outbox_backlog: await countPendingMail(h.db),
          webhooks: {
            pending_deliveries: backlog.pendingDeliveries,
            oldest_pending_age_ms:
              backlog.oldestPendingAt === null ? null : Math.max(0, now - backlog.oldestPendingAt),
            undispatched_events: backlog.undispatchedEvents,
          },
          engine: {
            last_tick_at: iso(engine?.last_tick_at ?? null),
            scheduler_lag_ms: engine?.last_tick_at ? Math.max(0, Date.now() - engine.last_tick_at) : null,
            in_flight: engine?.in_flight ?? 0,
            due_unclaimed_posts: due.count,
            oldest_due_age_ms: due.oldest === null ? null : Math.max(0, now - due.oldest),
          },
        };
      },
      { detail: { hide: true } },
    )
    .get(
      "/v1/openapi.json",
      () =>
        (document ??= openApiDocument(h, app()).catch((error: unknown) => {
          document = null;
          throw error;
        })),
      operation({ scope: null, summary: "This OpenAPI 3.1 document", tag: "Meta" }),
    )
    .get(
      "/v1/docs",
      () =>
        new Response(
          `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Herald API reference</title></head>
<body><script id="api-reference" data-url="/v1/openapi.json" data-configuration="${escapeHtml(JSON.stringify(DOCS_UI_CONFIG))}"></script>
<script src="/v1/docs/assets/api-reference.js"></script></body></html>`,
          { headers: { "content-type": "text/html; charset=utf-8" } },
        ),
      { detail: { hide: true } },
    )
    .get(
      "/v1/docs/assets/api-reference.js",
      () =>
        new Response(Bun.file(scalarBundlePath), {
          headers: {
            "content-type": "text/javascript; charset=utf-8",
            "cache-control": "public, max-age=86400",
          },
        }),
      { detail: { hide: true } },
    )
    .get(
      "/v1/docs/reference/errors",
      () => {
        const rows = Object.entries(problemCatalog)
          .map(
            ([code, e]) =>
              `<tr id="${code}"><td><code>${code}</code></td><td>${e.status}</td><td>${escapeHtml(e.title)}</td><td>${e.category ?? "—"}</td><td>${e.userAction ?? "—"}</td></tr>`,
          )
          .join("\n");
        return new Response(
          `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Herald error codes</title>
<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto}td,th{padding:.3rem .6rem;border-bottom:1px solid #ddd;text-align:left}:target{background:#ffd}</style></head>
<body><h1>Error codes</h1><p>Every error is <code>application/problem+json</code>; <code>type</code> links here. API reference: <a href="${escapeHtml(docsUrl(h))}">${escapeHtml(docsUrl(h))}</a>.</p>
<table><tr><th>code</th><th>status</th><th>title</th><th>category</th><th>user_action</th></tr>
${rows}</table></body></html>`,
          { headers: { "content-type": "text/html; charset=utf-8" } },
        );
      },
      { detail: { hide: true } },
    );
}
