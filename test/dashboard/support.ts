import { expect } from "bun:test";
import { tables } from "../helpers/tables.ts";
import { newId } from "../../src/db/ids.ts";
import { inTransaction } from "../../src/db/transaction.ts";
import { DASHBOARD_CSP, dashboardCsp } from "../../src/http/dashboard/router.ts";
import { bootstrapAccount } from "../../src/modules/account/bootstrap.ts";
import type { Role } from "../../src/modules/account/roles.ts";
import type { BlueskyFake } from "../fakes/bluesky.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { hiddenFields, type PageResponse, TestBrowser } from "../helpers/browser.ts";

import type { Element } from "domhandler";
import { DomUtils } from "htmlparser2";
import { attributeOf, formOf, type Screen, screenOf, textOf } from "../helpers/screen.ts";

const { users } = tables;

export { TestBrowser, csrfTokenOf, formAction, hiddenFields } from "../helpers/browser.ts";
export { attributeOf, formOf, screenOf, textOf, valueOf } from "../helpers/screen.ts";

export const PASSWORD = "correct horse battery";

/** A server with an owner who signs in with a password, and a second account to be foreign to. */
export interface DashboardWorld {
  s: TestServer;
  owner: { email: string; accountId: string; workspaceId: string; apiKey: string };
  /** A workspace of another account (the dashboard must answer 404 for it). */
  foreignWorkspaceId: string;
  /** A browser signed in as the owner. */
  signedIn(): Promise<TestBrowser>;
  /** Adds a person with `role` to the owner's account and returns a browser signed in as them. */
  signedInAs(role: Role, email?: string): Promise<TestBrowser>;
  stop(): Promise<void>;
}

let people = 0;

/** Starts a test server with an owner (password `PASSWORD`) and a foreign account. */
export async function dashboardWorld(
  options: Parameters<typeof startTestServer>[0] = {},
): Promise<DashboardWorld> {
  const s = await startTestServer(options);
  const email = `dash-owner-${++people}@example.com`;
  const made = await bootstrapAccount(s.herald, { email, workspaceName: "Acme", password: PASSWORD });
  const foreign = await s.bootstrap(`foreign-${people}@example.com`, "Elsewhere");
  const owner = {
    email,
    accountId: made.account_id,
    workspaceId: made.workspace_id,
    apiKey: made.api_key,
  };
  const signInAs = async (who: string) => {
    const browser = new TestBrowser(s);
    await browser.signIn(who, PASSWORD);
    return browser;
  };
  return {
    s,
    owner,
    foreignWorkspaceId: foreign.workspaceId,
    signedIn: () => signInAs(email),
    async signedInAs(role, who = `dash-${role}-${++people}@example.com`) {
      const passwordHash = await Bun.password.hash(PASSWORD);
      await inTransaction(s.herald.db, (tx) =>
        tx.insert(users).values({
          id: newId("usr"),
          accountId: owner.accountId,
          email: who,
          passwordHash,
          role,
          createdAt: s.clock.now(),
        }),
      );
      return signInAs(who);
    },
    stop: () => s.stop(),
  };
}

/**
 * Connects alice.test of the Bluesky fake to the owner's workspace with the owner's key (the server's
 * default key belongs to another account); its destination id.
 */
export async function connectOwnersBluesky(world: DashboardWorld, bluesky: BlueskyFake): Promise<string> {
  const connected = await world.s.request(
    "POST",
    `/v1/workspaces/${world.owner.workspaceId}/destination-connections`,
    {
      key: world.owner.apiKey,
      body: {
        provider: "bluesky",
        instance_origin: bluesky.origin,
        handle: "alice.test",
        app_password: "alice-app-pass",
      },
    },
  );
  expect({ status: connected.status, text: connected.text }).toMatchObject({ status: 201 });
  return connected.body.destination_id;
}

/** The badges (a state in a word, its tone in colour) inside an element, in order. */
export function badgesIn(el: Element): { text: string; tone: string }[] {
  return DomUtils.findAll((e) => (e.attribs.class ?? "").split(" ").includes("badge"), [el]).map((b) => ({
    text: textOf(b),
    tone: b.attribs
      .class!.split(" ")
      .filter((c) => c !== "badge")
      .join(" "),
  }));
}

/** Where the forms a person can send on this screen post to (each form with a button, in order). */
export function formActionsOf(screen: Screen): string[] {
  return screen
    .getAllByRole("button")
    .map((button) => formOf(button))
    .filter((form) => form !== null)
    .map((form) => attributeOf(form, "action") ?? "");
}

/** The text of the page's status notices (`role="status"`), in order. */
export function noticesOf(page: { text: string }): string[] {
  const screen = screenOf(page.text);
  return screen.getAllByRole("status").map((el) => textOf(el));
}

/** The page's main heading (its one `h1`) as a person reads it. */
export function headingOf(page: { text: string }): string {
  const screen = screenOf(page.text);
  return screen.nameOf(screen.getByRole("heading", { level: 1 }));
}

/**
 * What every dashboard page must be: HTML with the dashboard's headers, a title and a main heading, only
 * local assets and no inline script or style, every control named for assistive technology, and a POST
 * with a CSRF token on every form that changes something.
 */
export function expectDashboardPage(
  path: string,
  r: { status: number; headers: Headers; text: string },
  options: { formActions?: string[] } = {},
) {
  const where = { path };
  expect({ ...where, type: r.headers.get("content-type") }).toEqual({
    ...where,
    type: "text/html; charset=utf-8",
  });
  const csp = options.formActions ? dashboardCsp(options.formActions) : DASHBOARD_CSP;
  expect({ ...where, csp: r.headers.get("content-security-policy") }).toEqual({ ...where, csp });
  expect(r.headers.get("cache-control")).toBe("no-store");
  expect(r.headers.get("x-frame-options")).toBe("DENY");
  expect(r.text).toStartWith("<!doctype html>");
  const screen = screenOf(r.text);
  // The document's title (an SVG chart's titles name the chart, not the page).
  const titles = screen
    .elements("title")
    .filter((t) => (t.parent as Element | null)?.name === "head")
    .map((t) => textOf(t));
  expect({ ...where, titles }).toEqual({ ...where, titles: [expect.stringMatching(/^.+ · Herald$/)] });
  expect({ ...where, h1: screen.namesOf("heading", { level: 1 }).length }).toEqual({ ...where, h1: 1 });
  // Scripts: only the dashboard's own file; no inline style attributes or handlers.
  expect(r.text).not.toMatch(/<script(?! src="\/pages\/dashboard\.js" defer><\/script>)/i);
  expect(r.text).not.toMatch(/\s(style|on[a-z]+)=/i);
  for (const [, url] of r.text.matchAll(/\b(?:src|href|action)="([^"]*)"/g))
    expect({ ...where, url }).toEqual({ ...where, url: expect.stringMatching(/^(\/(?!\/)|#)/) });
  // Every control a person fills in has a name (its label), so a screen reader can say what it is for.
  for (const control of screen.elements("input", "select", "textarea")) {
    if (attributeOf(control, "type") === "hidden") continue;
    const name = attributeOf(control, "name");
    expect({ ...where, control: name, label: screen.nameOf(control) }).toEqual({
      ...where,
      control: name,
      label: expect.stringMatching(/\S/),
    });
  }
  for (const form of screen.elements("form")) {
    const action = attributeOf(form, "action");
    const csrf = screen
      .within(form)
      .elements("input")
      .some((input) => attributeOf(input, "name") === "csrf_token");
    // A GET form (filters, a date range) changes nothing: no token, and none leaks into its URL.
    if (attributeOf(form, "method") === "get") {
      expect({ ...where, action, getFormCsrf: csrf }).toEqual({ ...where, action, getFormCsrf: false });
      continue;
    }
    expect({ ...where, action, method: attributeOf(form, "method") }).toEqual({
      ...where,
      action,
      method: "post",
    });
    expect({ ...where, action, csrf }).toEqual({ ...where, action, csrf: true });
  }
  const ids = screen.elements().flatMap((el) => attributeOf(el, "id") ?? []);
  expect({ ...where, duplicateIds: ids.filter((id, i) => ids.indexOf(id) !== i) }).toEqual({
    ...where,
    duplicateIds: [],
  });
}

/**
 * Posts a page's form like `browser.submit`, with fields given as pairs so that a name can repeat (a
 * group of checkboxes); the page's hidden fields (CSRF token, idempotency key) come first, unless a
 * pair names them (then the pair replaces them, as a browser's own value would).
 */
export async function submitPairs(
  _s: TestServer,
  browser: TestBrowser,
  page: string,
  action: string,
  pairs: [string, string][],
): Promise<PageResponse> {
  const opened = await browser.get(page);
  expect({ page, status: opened.status }).toEqual({ page, status: 200 });
  const given = new Set(pairs.map(([name]) => name));
  const hidden = Object.entries(hiddenFields(opened.text, action)).filter(([name]) => !given.has(name));
  return browser.send("POST", action, [...hidden, ...pairs]);
}

/** Posts urlencoded pairs with the browser's cookies (no redirects followed). */
export function postPairs(
  _s: TestServer,
  browser: TestBrowser,
  path: string,
  pairs: [string, string][],
): Promise<PageResponse> {
  return browser.send("POST", path, pairs);
}
