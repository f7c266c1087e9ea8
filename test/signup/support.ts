import { expect } from "bun:test";
import { eq } from "drizzle-orm";
import { pathOf, TestBrowser } from "../helpers/browser.ts";
import type { TestServer } from "../helpers/server.ts";
import { tables } from "../helpers/tables.ts";

/** A password the signup page accepts (long enough, not a common one). */
export const SIGNUP_PASSWORD = "a long enough password";

/**
 * Signs a person up the way people do: a signup intent through the API, then the hosted page's form.
 * Their account, user and workspace ids, and the browser the page signed in.
 */
export async function signUpThroughPage(
  s: TestServer,
  person: { email: string; name: string; workspaceName: string },
) {
  const intent = await s.request("POST", "/v1/signup-intents", {
    key: null,
    body: { email: person.email, workspace_name: person.workspaceName },
  });
  expect(intent.status).toBe(201);
  const browser = new TestBrowser(s);
  const done = await browser.submit(pathOf(intent.body.signup_url), {
    name: person.name,
    password: SIGNUP_PASSWORD,
    password_confirmation: SIGNUP_PASSWORD,
  });
  expect(done.status).toBe(303);
  const [user] = await s.herald.db.select().from(tables.users).where(eq(tables.users.email, person.email));
  const [workspace] = await s.herald.db
    .select()
    .from(tables.workspaces)
    .where(eq(tables.workspaces.accountId, user!.accountId));
  return { accountId: user!.accountId, userId: user!.id, workspaceId: workspace!.id, browser };
}
