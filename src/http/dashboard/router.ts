import { Elysia } from "elysia";
import type { Herald } from "../../herald.ts";
import type { Actor } from "../../core/actor.ts";
import { sessionActor } from "../../modules/account/roles.ts";
import { mayManageInstallation } from "../../modules/installation/service.ts";
import type { PageSession } from "../../modules/sessions/service.ts";
import { ProblemError } from "../../core/problem.ts";
import { clientRequestIdOf, requestIdOf } from "../plugin.ts";
import {
  type Browser,
  browserOf,
  csrfOf,
  formFromThisBrowser,
  pageResponse,
  readForm,
  redirect,
} from "../pages/respond.ts";
import { DashboardApi } from "./api.ts";
import type { Listing, Workspace } from "./api-resources.ts";
import { dashboardLayout, type DashboardFrame, type WorkspaceRef } from "./layout.ts";
import { html, type Markup } from "../pages/html.ts";

/**
 * Headers of dashboard pages: those of every page, except that the dashboard's own script (progressive
 * enhancement: copy buttons, upload progress) may load and call back to Herald.
 */
export const DASHBOARD_CSP = dashboardCsp();

/**
 * The dashboard's CSP, with more sources a form may lead to: browsers hold the redirect after a POST to
 * `form-action` too, so a page whose form answers 303 to another site (OAuth) must name it.
 */
export function dashboardCsp(formActions: string[] = []): string {
  return (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; script-src 'self'; connect-src 'self'; " +
    `form-action ${["'self'", ...formActions].join(" ")}; frame-ancestors 'none'; base-uri 'none'`
  );
}

/** Everything a dashboard handler gets: the person, their actor and API client, the workspace. */
export interface DashboardRequest {
  h: Herald;
  request: Request;
  browser: Browser;
  session: PageSession;
  actor: Actor;
  api: DashboardApi;
  /** The CSRF token every form on the answer carries. */
  csrf: string;
  params: Record<string, string>;
  query: URLSearchParams;
  /** The workspace of a `/dashboard/workspaces/:workspace_id/...` page (already checked). */
  workspace: WorkspaceRef | null;
  /** The account's workspaces, for the navigation. */
  workspaces: WorkspaceRef[];
  /** Renders a whole dashboard page around its content. */
  render(title: string, content: Markup, options?: RenderOptions): Response;
  /** 303 to a local path. */
  redirect(location: string): Response;
  /** A page that only says something (outcomes, errors). */
  message(status: number, heading: string, paragraphs: (string | Markup)[]): Response;
  /** Whether a form's `csrf_token` is this browser's (for `multipart` handlers, which read their body). */
  csrfValid(token: string | null): boolean;
  /** The 403 page of a form that is not from this browser. */
  refused(): Response;
}

/** How a page is rendered besides its content. */
export interface RenderOptions {
  status?: number;
  /** The navigation entry to mark as current. */
  section?: string;
  /** Other sites the page's forms redirect to (see `dashboardCsp`). */
  formActions?: string[];
}

type Handler = (r: DashboardRequest) => Response | Promise<Response>;
type FormHandler = (r: DashboardRequest, form: URLSearchParams) => Response | Promise<Response>;

/** Where dashboard handlers are registered: GET pages and POST forms, both behind a session. */
export interface DashboardRoutes {
  page(path: string, handler: Handler): DashboardRoutes;
  form(path: string, handler: FormHandler): DashboardRoutes;
  /** A POST whose body the handler reads itself (multipart uploads); CSRF from `x-csrf-token`. */
  raw(path: string, handler: Handler): DashboardRoutes;
  /**
   * A POST form the handler reads itself (multipart with files, or urlencoded), signed in first; the
   * handler checks the form's `csrf_token` with `r.csrfValid` before it acts on or stores anything.
   */
  multipart(path: string, handler: Handler): DashboardRoutes;
}

const hidden = { detail: { hide: true } };

/**
 * Builds the dashboard routes under `/dashboard`. Every handler runs signed in (else 303 to /login with
 * `next`), with a CSRF-checked form for POSTs, and with the workspace of its path checked through the
 * API (a workspace of another account, or one the person cannot use, is a 404 page).
 */
export function dashboardRouter(
  h: Herald,
  handle: (request: Request) => Promise<Response>,
  register: (routes: DashboardRoutes) => void,
) {
  const app = new Elysia();

  const open = (request: Request, params: Record<string, string>) =>
    openDashboardRequest(h, handle, request, params);

  const routes: DashboardRoutes = {
    page(path, handler) {
      app.get(
        path,
        async ({ request, params }) => {
          const r = await open(request, (params ?? {}) as Record<string, string>);
          return r instanceof Response ? r : unconfirmedShown(r, () => handler(r));
        },
        hidden,
      );
      return routes;
    },
    form(path, handler) {
      app.post(
        path,
        async ({ request, params }) => {
          const form = await readForm(request);
          const r = await open(request, (params ?? {}) as Record<string, string>);
          if (r instanceof Response) return r;
          if (!formFromThisBrowser(h, r.browser, form)) return refused(r);
          return unconfirmedShown(r, () => handler(r, form));
        },
        { ...hidden, parse: "none" as const },
      );
      return routes;
    },
    raw(path, handler) {
      app.post(
        path,
        async ({ request, params }) => {
          const r = await open(request, (params ?? {}) as Record<string, string>);
          if (r instanceof Response) return r;
          const token = new URLSearchParams({ csrf_token: request.headers.get("x-csrf-token") ?? "" });
          if (!formFromThisBrowser(h, r.browser, token)) return refused(r);
          return unconfirmedShown(r, () => handler(r));
        },
        { ...hidden, parse: "none" as const },
      );
      return routes;
    },
    multipart(path, handler) {
      app.post(
        path,
        async ({ request, params }) => {
          const r = await open(request, (params ?? {}) as Record<string, string>);
          return r instanceof Response ? r : unconfirmedShown(r, () => handler(r));
        },
        { ...hidden, parse: "none" as const },
      );
      return routes;
    },
  };
  register(routes);
  return app;
}

/**
 * Runs a handler; a write refused because the account's address is not confirmed yet (403
 * `public_email_unconfirmed`, from the API or the key form) becomes one page that says so and offers
 * to send the link again, whichever page asked.
 */
async function unconfirmedShown(r: DashboardRequest, run: () => Response | Promise<Response>) {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof ProblemError) || error.code !== "public_email_unconfirmed") throw error;
    return r.render(
      "Confirm your address first",
      html`<h1>Confirm your address first</h1>
<div class="notice warn" role="alert"><p>${error.detail}</p>
<p>We sent the link to <strong>${r.session.email}</strong>.</p>
<form method="post" action="/dashboard/resend-confirmation" class="inline">
<input type="hidden" name="csrf_token" value="${r.csrf}">
<button type="submit" class="secondary">Send the link again</button></form></div>
<p><a href="/dashboard">Back to your account</a></p>`,
      { status: 403 },
    );
  }
}

/**
 * The page's request: the browser's session (none: to the login page, coming back to a GET), the
 * person's API, the workspaces the navigation lists, and the workspace of the path when it has one.
 */
async function openDashboardRequest(
  h: Herald,
  handle: (request: Request) => Promise<Response>,
  request: Request,
  params: Record<string, string>,
): Promise<DashboardRequest | Response> {
  const browser = await browserOf(h, request);
  const session = browser.session;
  const url = new URL(request.url);
  if (!session) {
    const next = request.method === "GET" ? url.pathname + url.search : "/dashboard";
    return redirect(h, browser, `/login?next=${encodeURIComponent(next)}`);
  }
  const actor = {
    ...sessionActor(session, requestIdOf(request)),
    clientRequestId: clientRequestIdOf(request),
  };
  const api = new DashboardApi(handle, actor);
  const csrf = csrfOf(h, browser);
  const workspaces = await navigationWorkspaces(api);
  const serverSettings = await mayManageInstallation(h, session);
  const r: DashboardRequest = {
    h,
    request,
    browser,
    session,
    actor,
    api,
    csrf,
    params,
    query: url.searchParams,
    workspace: null,
    workspaces,
    render(title, content, options = {}) {
      const frame: DashboardFrame = {
        title,
        email: session.email,
        role: session.role,
        accountName: session.accountName,
        csrf,
        workspace: r.workspace,
        workspaces,
        section: options.section ?? null,
        serverSettings,
      };
      return pageResponse(h, browser, dashboardLayout(frame, content), {
        status: options.status ?? 200,
        headers: { "content-security-policy": dashboardCsp(options.formActions) },
      });
    },
    redirect: (location) => redirect(h, browser, location),
    message: (status, heading, paragraphs) =>
      r.render(heading, html`<h1>${heading}</h1>${paragraphs.map((p) => html`<p>${p}</p>`)}`, { status }),
    csrfValid: (token) => formFromThisBrowser(h, browser, new URLSearchParams({ csrf_token: token ?? "" })),
    refused: () => refused(r),
  };
  const workspaceId = params.workspace_id;
  if (workspaceId === undefined) return r;
  r.workspace = await pathWorkspace(api, workspaces, workspaceId);
  if (!r.workspace)
    return r.message(404, "Workspace not found", [
      "It does not exist, or it belongs to another account.",
      html`<a href="/dashboard">Back to your account</a>`,
    ]);
  return r;
}

/** The first hundred workspaces the person can use, as the navigation lists them. */
async function navigationWorkspaces(api: DashboardApi): Promise<WorkspaceRef[]> {
  const listed = await api.get<Listing<Workspace>>("/workspaces?limit=100");
  return (listed.ok ? listed.body.data : []).map(workspaceRefOf);
}

function workspaceRefOf(w: Workspace): WorkspaceRef {
  return { id: w.id, name: w.name, timeZone: w.time_zone, tracksLinks: w.link_tracking.enabled };
}

/** The path's workspace when the person can use it, else null. */
async function pathWorkspace(
  api: DashboardApi,
  workspaces: WorkspaceRef[],
  workspaceId: string,
): Promise<WorkspaceRef | null> {
  const listed = workspaces.find((w) => w.id === workspaceId);
  if (listed) return listed;
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(workspaceId)) return null;
  // The navigation lists the first hundred; a later one is looked up on its own.
  const one = await api.get<Workspace>(`/workspaces/${workspaceId}`);
  return one.ok ? workspaceRefOf(one.body) : null;
}

/** A POST whose CSRF token is not this browser's: nothing is done. */
function refused(r: DashboardRequest): Response {
  return r.message(403, "This form cannot be used", [
    "It has expired, or it was not sent from Herald's own page. Go back, reload the page and try again.",
  ]);
}
