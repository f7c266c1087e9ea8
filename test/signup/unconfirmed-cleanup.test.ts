// The unconfirmed-accounts job: an account whose address is still unconfirmed 7 days after signup is
// deleted with every row of it, in one transaction, and its address can sign up again; confirmed and
// bootstrapped accounts are untouched. Run on both engines (scripts/test-postgres.sh).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq, getTableColumns, getTableName, sql } from "drizzle-orm";
import { inTransaction } from "../../src/db/transaction.ts";
import { UNCONFIRMED_ACCOUNT_TTL_MS } from "../../src/modules/signup/cleanup.ts";
import { markAddressConfirmed } from "../../src/modules/signup/repo.ts";
import { TestBrowser } from "../helpers/browser.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { tables } from "../helpers/tables.ts";
import { SIGNUP_PASSWORD as PASSWORD, signUpThroughPage } from "./support.ts";

let s: TestServer;

beforeAll(async () => {
  s = await startTestServer({
    env: { HERALD_SIGNUP_CONFIRM_EMAIL: "on", HERALD_SIGNUP_REQUESTS_PER_HOUR: "100" },
  });
});
afterAll(async () => {
  await s.stop();
});

/** Signs a person up through the page; their account, user and workspace ids, and their browser. */
const signUp = (email: string) => signUpThroughPage(s, { email, name: "Someone", workspaceName: "Mine" });

/** Rows that name an account in any table with an account_id or a workspace_id of it. */
async function rowsOf(accountId: string, workspaceId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of Object.values(tables) as any[]) {
    const columns = Object.values(getTableColumns(table)) as any[];
    const account = columns.find((c) => c.name === "account_id");
    const workspace = columns.find((c) => c.name === "workspace_id");
    const id = getTableName(table) === "accounts" ? columns.find((c) => c.name === "id") : null;
    const condition = id
      ? sql`${id} = ${accountId}`
      : account
        ? sql`${account} = ${accountId}`
        : workspace
          ? sql`${workspace} = ${workspaceId}`
          : null;
    if (!condition) continue;
    const [row] = await s.herald.db.select({ n: sql<number>`count(*)` }).from(table).where(condition);
    if (Number(row!.n) > 0) counts[getTableName(table)] = Number(row!.n);
  }
  return counts;
}

describe("accounts left unconfirmed for 7 days", () => {
  let squatter: Awaited<ReturnType<typeof signUp>>;
  let confirmed: Awaited<ReturnType<typeof signUp>>;

  beforeAll(async () => {
    squatter = await signUp("squat@example.com");
    confirmed = await signUp("kept@example.com");
    await inTransaction(s.herald.db, (tx) => markAddressConfirmed(tx, confirmed.userId, s.clock.now()));
    // Rows of the squatter's own: a key, a renamed workspace (audit), a queue, a second session.
    const key = await s.createKey({ accountId: squatter.accountId, workspaceIds: [squatter.workspaceId] });
    const base = `/v1/workspaces/${squatter.workspaceId}`;
    expect((await s.request("PATCH", base, { key, body: { name: "Squatted" } })).status).toBe(200);
    const queue = await s.request("PUT", `${base}/queue`, {
      key,
      body: { windows: [{ weekday: 1, local_time: "09:00" }] },
    });
    expect(queue.status).toBe(200);
    await new TestBrowser(s).signIn("squat@example.com", PASSWORD);
  });

  test("before 7 days nothing is deleted", async () => {
    s.clock.advance(UNCONFIRMED_ACCOUNT_TTL_MS - 60_000);
    await s.server.scheduler.runNow("unconfirmed-accounts");
    expect(Object.keys(await rowsOf(squatter.accountId, squatter.workspaceId))).toContain("accounts");
  });

  test("after 7 days the account and every row of it are gone; the others stay whole", async () => {
    const before = await rowsOf(squatter.accountId, squatter.workspaceId);
    expect(Object.keys(before)).toEqual(
      expect.arrayContaining([
        "accounts",
        "users",
        "workspaces",
        "api_keys",
        "sessions",
        "email_confirmations",
      ]),
    );
    const kept = await rowsOf(confirmed.accountId, confirmed.workspaceId);
    const admin = await rowsOf(s.owner.accountId, s.owner.workspaceId);
    s.clock.advance(2 * 60_000);
    await s.server.scheduler.runNow("unconfirmed-accounts");
    expect(await rowsOf(squatter.accountId, squatter.workspaceId)).toEqual({});
    const mail = await s.herald.db
      .select()
      .from(tables.mailOutbox)
      .where(eq(tables.mailOutbox.toAddress, "squat@example.com"));
    expect(mail).toEqual([]);
    expect(await rowsOf(confirmed.accountId, confirmed.workspaceId)).toEqual(kept);
    expect(await rowsOf(s.owner.accountId, s.owner.workspaceId)).toEqual(admin);
    const logged = s.logs
      .map((l) => JSON.parse(l))
      .filter((l) => l.message === "unconfirmed account deleted");
    expect(logged.map((l) => l.account_id)).toEqual([squatter.accountId]);
  });

  test("the squatter's session and keys no longer work, and the address can sign up again", async () => {
    expect((await squatter.browser.get("/dashboard")).status).toBe(303);
    const again = await signUp("squat@example.com");
    expect(again.accountId).not.toBe(squatter.accountId);
  });
});
