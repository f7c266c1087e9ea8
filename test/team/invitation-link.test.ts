// Where no mail is configured, the inviting person gets the invitation link to pass on, once: in the
// API answer of creating (or resending) an invitation as `invitation_url`, and on the dashboard page
// that answers the invite form. A replay of the same request leaves it out, nothing stores it, and a
// server that sends mail never answers it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { tables } from "../helpers/tables.ts";
import { screenOf, textOf } from "../helpers/screen.ts";
import { TestBrowser } from "../helpers/browser.ts";
import type { TestServer } from "../helpers/server.ts";
import {
  dashboardWorld,
  type DashboardWorld,
  expectDashboardPage,
  headingOf,
  submitPairs,
} from "../dashboard/support.ts";
import { invite, startTeamServer } from "./helpers.ts";

const { idempotencyKeys } = tables;

describe("without mail (no HERALD_SMTP_URL)", () => {
  let world: DashboardWorld;
  let s: TestServer;
  beforeAll(async () => {
    world = await dashboardWorld();
    s = world.s;
  });
  afterAll(() => world.stop());

  test("the API answer carries invitation_url once; the link opens the invitation page", async () => {
    const headers = { "idempotency-key": "link-once" };
    const body = { email: "pass-it-on@example.com", role: "admin" };
    const key = world.owner.apiKey;
    const r = await s.request("POST", "/v1/account/invitations", { key, headers, body });
    expect(r.status).toBe(201);
    expect(r.body.invitation_url).toMatch(new RegExp(`^${s.url}/invitations/[A-Za-z0-9]{43}$`));
    const token = r.body.invitation_url.split("/").at(-1);

    const page = await new TestBrowser(s).get(new URL(r.body.invitation_url).pathname);
    expect(page.status).toBe(200);

    // The replay answers the same invitation without the link, and no stored answer holds it.
    const replay = await s.request("POST", "/v1/account/invitations", { key, headers, body });
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body.id).toBe(r.body.id);
    expect(replay.body).not.toHaveProperty("invitation_url");
    const stored = await s.herald.db.select().from(idempotencyKeys);
    expect(JSON.stringify(stored)).not.toContain(token);

    // The listing never shows it; a resend makes and shows a new one.
    const listed = await s.request("GET", "/v1/account/invitations", { key });
    expect(listed.body.data.find((i: { id: string }) => i.id === r.body.id)).not.toHaveProperty(
      "invitation_url",
    );
    const resent = await s.request("POST", `/v1/account/invitations/${r.body.id}/resend`, { key });
    expect(resent.status).toBe(200);
    expect(resent.body.invitation_url).toMatch(/\/invitations\/[A-Za-z0-9]{43}$/);
    expect(resent.body.invitation_url).not.toBe(r.body.invitation_url);
  });

  test("the dashboard shows the link to pass on, once, instead of promising an e-mail", async () => {
    const owner = await world.signedIn();
    const team = await owner.get("/dashboard/team");
    expect(screenOf(team.text).descriptionOf(screenOf(team.text).getByLabelText("E-mail address"))).toContain(
      "you get the invitation link to pass on",
    );
    const r = await submitPairs(s, owner, "/dashboard/team", "/dashboard/team/invitations", [
      ["email", "friend@example.com"],
    ]);
    expect(r.status).toBe(201);
    expectDashboardPage("/dashboard/team/invitations", r);
    expect(headingOf(r)).toBe("Invitation created");
    const screen = screenOf(r.text);
    expect(textOf(screen.getAllByRole("status")[0]!)).toContain(
      "No e-mail goes out: this server has no mail configured.",
    );
    const link = textOf(screen.byId("invitation-link")!);
    expect(link).toMatch(new RegExp(`^${s.url}/invitations/[A-Za-z0-9]{43}$`));
    expect(screen.getByRole("button", { name: "Copy", hidden: true })).toBeDefined();
    expect((await new TestBrowser(s).get(new URL(link).pathname)).status).toBe(200);

    // Back on the team page the link is gone: it was shown this once.
    const after = await owner.get("/dashboard/team");
    expect(after.text).not.toContain(link.split("/").at(-1)!);
  });
});

describe("with mail", () => {
  test("the answer has no invitation_url: the link goes by e-mail only", async () => {
    const { s, stop } = await startTeamServer();
    try {
      const r = await invite(s, "mailed@example.com");
      expect(r.status).toBe(201);
      expect(r.body).not.toHaveProperty("invitation_url");
    } finally {
      await stop();
    }
  });
});
