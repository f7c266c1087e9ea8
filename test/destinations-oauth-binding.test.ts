// The OAuth return is bound to who started the connection, not only to `state`: one started in the
// dashboard completes only in the browser signed in with that session (another browser sees a clear
// refusal and nothing changes); one started with an API key stops on a confirmation page naming the
// accounts, the workspace and the Herald account, and only its "Connect" button (a POST with this
// browser's CSRF token) attaches them.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startXFake, type XFake, xFakeEnv } from "./fakes/x.ts";
import { TestBrowser } from "./helpers/browser.ts";
import { attributeOf, formOf, screenOf, textOf, valueOf } from "./helpers/screen.ts";
import { dashboardWorld, type DashboardWorld, headingOf } from "./dashboard/support.ts";

let world: DashboardWorld;
let x: XFake;
let owner: TestBrowser;
let page: string;

beforeAll(async () => {
  x = await startXFake({ processingPolls: 0 });
  world = await dashboardWorld({
    env: {
      HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1",
      ...xFakeEnv(x),
    },
  });
  x.redirectUris.push(`${world.s.url}/oauth/callback/x`);
  owner = await world.signedIn();
  page = `/dashboard/workspaces/${world.owner.workspaceId}/destinations`;
});
afterAll(async () => {
  await world.stop();
  await x.stop();
});

const local = (url: string) => url.replace(world.s.url, "");
const connection = (id: string) =>
  world.s.request("GET", `/v1/workspaces/${world.owner.workspaceId}/destination-connections/${id}`, {
    key: world.owner.apiKey,
  });

/** The network's consent, approved: the return URL it sends the browser to. */
async function approve(authorizationUrl: string): Promise<string> {
  const consent = await fetch(authorizationUrl, { redirect: "manual" });
  expect(consent.status).toBe(302);
  return local(consent.headers.get("location")!);
}

describe("a connection started in the dashboard", () => {
  test("returning in another browser is refused with a clear page; the starting browser still completes it", async () => {
    const r = await owner.submit(page, {}, `${page}/connect/x`);
    expect(r.status).toBe(303);
    const back = await approve(r.location!);

    for (const stranger of [new TestBrowser(world.s), await world.signedInAs("owner")]) {
      const refused = await stranger.get(back);
      expect(refused.status).toBe(403);
      expect(headingOf(refused)).toBe("Not connected: started in another browser");
      expect(refused.text).toContain("do not use it: it would attach your account to their workspace");
      expect(refused.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    }
    const state = new URL(back, world.s.url).searchParams.get("state")!;
    const listed = await world.s.request("GET", `/v1/workspaces/${world.owner.workspaceId}/destinations`, {
      key: world.owner.apiKey,
    });
    expect(listed.body.data).toHaveLength(0);

    const done = await owner.get(back);
    expect(done.status).toBe(303);
    expect(done.location).toContain("notice=connected");
    expect(state).toBeTruthy();
  });
});

describe("a connection started with an API key", () => {
  async function startWithKey(): Promise<{ id: string; back: string }> {
    const started = await world.s.request(
      "POST",
      `/v1/workspaces/${world.owner.workspaceId}/destination-connections`,
      { key: world.owner.apiKey, body: { provider: "x" } },
    );
    expect(started.status).toBe(201);
    return { id: started.body.id, back: await approve(started.body.authorization_url) };
  }

  test("shows a confirmation page naming the account, the workspace and the Herald account; nothing attached yet", async () => {
    const { id, back } = await startWithKey();
    const person = new TestBrowser(world.s);
    const confirm = await person.get(back);
    expect(confirm.status).toBe(200);
    expect(confirm.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(confirm.headers.get("x-frame-options")).toBe("DENY");
    const screen = screenOf(confirm.text);
    expect(headingOf(confirm)).toBe("Connect herald_dev to Herald?");
    expect(screen.definitions()).toMatchObject({
      Account: "Herald Dev herald_dev",
      Workspace: "Acme",
      "Herald account": "Acme",
    });
    const button = screen.getByRole("button", { name: "Connect herald_dev to Acme" });
    expect(screen.getByRole("button", { name: "Cancel" })).toBeDefined();
    expect(attributeOf(formOf(button)!, "method")).toBe("post");
    expect((await connection(id)).body).toMatchObject({ status: "pending", destination_id: null });

    // The return URL again (reloaded, or sent on) finds nothing: the state was used.
    const again = await new TestBrowser(world.s).get(back);
    expect(again.status).toBe(400);
  });

  test("pressing Connect attaches the account; a form from another browser does not", async () => {
    const { id, back } = await startWithKey();
    const person = new TestBrowser(world.s);
    const confirm = await person.get(back);
    const screen = screenOf(confirm.text);
    const form = formOf(screen.getByRole("button", { name: /^Connect / }))!;
    const fields = Object.fromEntries(
      screen
        .within(form)
        .elements("input")
        .map((i) => [attributeOf(i, "name")!, valueOf(i)]),
    );
    const action = attributeOf(form, "action")!;
    expect(action).toBe("/oauth/callback/x");

    // The same fields from a browser without this page's CSRF key: refused, nothing attached.
    const forged = await new TestBrowser(world.s).post(action, { ...fields, decision: "attach" });
    expect(forged.status).toBe(403);
    expect((await connection(id)).body.status).toBe("pending");

    const done = await person.post(action, { ...fields, decision: "attach" });
    expect(done.status).toBe(200);
    expect(headingOf(done)).toBe("Connected");
    expect(textOf(screenOf(done.text).getByRole("main"))).toContain("Connected Herald Dev.");
    const completed = (await connection(id)).body;
    expect(completed).toMatchObject({ status: "completed" });
    expect(completed.destination_id).toStartWith("dest_");

    // Answered once.
    const twice = await person.post(action, { ...fields, decision: "attach" });
    expect(twice.status).toBe(400);
  });

  test("Cancel attaches nothing and ends the connection", async () => {
    const { id, back } = await startWithKey();
    const person = new TestBrowser(world.s);
    const screen = screenOf((await person.get(back)).text);
    const form = formOf(screen.getByRole("button", { name: "Cancel" }))!;
    const fields = Object.fromEntries(
      screen
        .within(form)
        .elements("input")
        .map((i) => [attributeOf(i, "name")!, valueOf(i)]),
    );
    const r = await person.post(attributeOf(form, "action")!, { ...fields, decision: "cancel" });
    expect(r.status).toBe(400);
    expect(headingOf(r)).toBe("Not connected");
    expect((await connection(id)).body).toMatchObject({ status: "failed", destination_id: null });
  });
});
