import { html, type Markup } from "../pages/html.ts";
import { PAGE_CSS_PATH } from "../pages/layout.ts";

/** Where the dashboard's stylesheet additions and its script are served. */
export const DASHBOARD_CSS_PATH = "/pages/dashboard.css";
export const DASHBOARD_JS_PATH = "/pages/dashboard.js";

/** A workspace as the navigation names it. */
export interface WorkspaceRef {
  id: string;
  name: string;
  timeZone: string;
  /** Whether it publishes URLs as tracked short links (`link_tracking.enabled`). */
  tracksLinks: boolean;
}

/** What surrounds every dashboard page. */
export interface DashboardFrame {
  title: string;
  email: string;
  role: string;
  accountName: string;
  csrf: string;
  workspace: WorkspaceRef | null;
  workspaces: WorkspaceRef[];
  /** The navigation entry marked `aria-current`. */
  section: string | null;
  /** Whether the person may change the server's settings (the navigation then offers them). */
  serverSettings?: boolean;
}

/** The account's sections, then the current workspace's. */
const ACCOUNT_SECTIONS = [
  ["overview", "Overview", "/dashboard"],
  ["workspaces", "Workspaces", "/dashboard/workspaces"],
  ["keys", "API keys", "/dashboard/keys"],
  ["team", "Team", "/dashboard/team"],
  ["billing", "Billing", "/dashboard/billing"],
] as const;
const WORKSPACE_SECTIONS = [
  ["posts", "Posts", "posts"],
  ["calendar", "Calendar", "calendar"],
  ["compose", "Compose", "posts/new"],
  ["approvals", "Awaiting approval", "approvals"],
  ["destinations", "Destinations", "destinations"],
  ["webhooks", "Webhooks", "webhooks"],
  ["analytics", "Analytics", "analytics"],
  ["settings", "Settings", "settings"],
] as const;

function navLink(section: string | null, id: string, label: string, href: string): Markup {
  return html`<li><a href="${href}"${section === id ? html` aria-current="page"` : ""}>${label}</a></li>`;
}

/** A whole dashboard document: skip link, header, navigation, the page's `<main>`. */
export function dashboardLayout(frame: DashboardFrame, content: Markup): string {
  const ws = frame.workspace;
  const base = ws ? `/dashboard/workspaces/${ws.id}` : null;
  const switcher =
    frame.workspaces.length > 0
      ? html`<details class="switcher"><summary>${ws ? ws.name : "Choose a workspace"}</summary>
<ul>${frame.workspaces.map(
          (w) =>
            html`<li><a href="/dashboard/workspaces/${w.id}/posts"${
              w.id === ws?.id ? html` aria-current="true"` : ""
            }>${w.name}</a></li>`,
        )}</ul></details>`
      : "";
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${frame.title} · Herald</title>
<link rel="stylesheet" href="${PAGE_CSS_PATH}">
<link rel="stylesheet" href="${DASHBOARD_CSS_PATH}">
<script src="${DASHBOARD_JS_PATH}" defer></script>
</head>
<body class="dashboard">
<a class="skip" href="#main">Skip to content</a>
<header><a class="brand" href="/dashboard">Herald</a>
<form method="post" action="/logout">
<input type="hidden" name="csrf_token" value="${frame.csrf}">
<span class="muted">${frame.email} · ${frame.accountName} (${frame.role})</span>
<button type="submit" class="link">Sign out</button>
</form></header>
<div class="shell">
<nav aria-label="Dashboard">
<ul>${ACCOUNT_SECTIONS.map(([id, label, href]) => navLink(frame.section, id, label, href))}${
    frame.serverSettings ? navLink(frame.section, "server", "Server", "/dashboard/server") : ""
  }</ul>
${switcher}
${
  base
    ? html`<ul aria-label="${ws!.name}">${WORKSPACE_SECTIONS.map(([id, label, path]) =>
        navLink(frame.section, id, label, `${base}/${path}`),
      )}</ul>`
    : ""
}
</nav>
<main id="main" tabindex="-1">
${content}
</main>
</div>
</body>
</html>
`.text;
}
