import { expect } from "bun:test";
import { users } from "../helpers/tables.ts";
import { newId } from "../../src/db/ids.ts";
import { inTransaction } from "../../src/db/transaction.ts";
import { DASHBOARD_CSP, dashboardCsp } from "../../src/http/dashboard/router.ts";
import { bootstrapAccount } from "../../src/modules/account/bootstrap.ts";
import type { Role } from "../../src/modules/account/roles.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { hiddenFields, type PageResponse, TestBrowser } from "../signup/browser.ts";

export { TestBrowser, csrfTokenOf, formAction, hiddenFields } from "../signup/browser.ts";

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
 * What every dashboard page must be: HTML with the dashboard's headers, only local assets, labelled
 * controls, and a POST with a CSRF token on every form.
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
  expect(r.text).toMatch(/<title>[^<]+ · Herald<\/title>/);
  expect({ ...where, h1: /<h1[\s>]/.test(r.text) }).toEqual({ ...where, h1: true });
  // Scripts: only the dashboard's own file; no inline style attributes or handlers.
  expect(r.text).not.toMatch(/<script(?! src="\/pages\/dashboard\.js" defer><\/script>)/i);
  expect(r.text).not.toMatch(/\s(style|on[a-z]+)=/i);
  for (const [, url] of r.text.matchAll(/\b(?:src|href|action)="([^"]*)"/g))
    expect({ ...where, url }).toEqual({ ...where, url: expect.stringMatching(/^(\/(?!\/)|#)/) });
  for (const [, id] of r.text.matchAll(/<(?:input|select|textarea) [^>]*?id="([^"]+)"/g))
    expect({ ...where, id, labelled: r.text.includes(`<label for="${id}">`) }).toEqual({
      ...where,
      id,
      labelled: true,
    });
  for (const control of r.text.matchAll(/<(?:input|select|textarea) [^>]*>/g)) {
    if (control[0].includes('type="hidden"')) continue;
    expect({ ...where, control: control[0], hasId: /\sid="/.test(control[0]) }).toMatchObject({
      hasId: true,
    });
  }
  for (const [form] of r.text.matchAll(/<form[\s\S]*?<\/form>/g)) {
    // A GET form (filters, a date range) changes nothing: no token, and none leaks into its URL.
    if (form.startsWith('<form method="get"')) {
      expect({ ...where, getFormCsrf: form.includes('name="csrf_token"') }).toEqual({
        ...where,
        getFormCsrf: false,
      });
      continue;
    }
    expect({ ...where, post: form.startsWith('<form method="post"') }).toEqual({ ...where, post: true });
    expect({ ...where, csrf: form.includes('name="csrf_token"') }).toEqual({ ...where, csrf: true });
  }
  const ids = [...r.text.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]);
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
