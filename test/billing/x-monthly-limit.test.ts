// The monthly X limit is the operator's setting (HERALD_X_MONTHLY_POST_LIMIT, the contract's 50 when
// unset): the billing answer reports it as `x_usage.limit`, publishing enforces it, and the billing page
// says where it comes from without contradicting "every feature is available".
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { bootstrapAccount } from "../../src/modules/account/bootstrap.ts";
import { TestBrowser } from "../helpers/browser.ts";
import { expectProblem } from "../helpers/problems.ts";
import { screenOf } from "../helpers/screen.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { inline } from "../fuzz/document.ts";
import { api, insertXDestination, ok, X_APP_ENV } from "../posts/fixtures.ts";

const PASSWORD = "correct horse battery";

describe("HERALD_X_MONTHLY_POST_LIMIT set to 3", () => {
  let s: TestServer;
  let x: string;
  beforeAll(async () => {
    s = await startTestServer({ env: { ...X_APP_ENV, HERALD_X_MONTHLY_POST_LIMIT: "3" } });
    x = await insertXDestination(s, s.owner.workspaceId);
  });
  afterAll(() => s.stop());

  test("GET /v1/billing reports 3 as each workspace's x_usage.limit", async () => {
    const r = await s.request("GET", "/v1/billing");
    expect(r.status).toBe(200);
    expect(r.body.x_usage).toEqual([{ workspace_id: s.owner.workspaceId, used: 0, reserved: 0, limit: 3 }]);
  });

  test("the OpenAPI document describes this server's limit", async () => {
    const doc = (await s.request("GET", "/v1/openapi.json", { key: null })).body;
    const schema = inline(doc, doc.paths["/billing"].get.responses["200"].content["application/json"].schema);
    const usage = schema.properties.x_usage.items;
    expect(usage.properties.limit).toMatchObject({ const: 3 });
    expect(usage.properties.used).toEqual({ type: "integer", minimum: 0, maximum: 3 });
  });

  test("three X posts in a month are accepted and the fourth is 402", async () => {
    const a = api(s, s.owner.workspaceId);
    const toX = (text: string) => ({
      when: "2026-04-10T10:00:00Z",
      confirmed: true,
      group: `limit-${text.replace(" ", "-")}`,
      posts: [{ destination_id: x, body: [text] }],
    });
    for (const text of ["one", "two", "three"]) ok(await a.create(toX(text)));
    const over = await a.create(toX("four"));
    expectProblem(over, 402, "public_usage_limit_reached");
    expect(over.body.detail).toContain("past 3 X posts in 2026-04");
    // A reschedule into the full month is refused by the same limit.
    const may = ok(await a.create({ ...toX("in May"), when: "2026-05-10T10:00:00Z" })).body.posts[0];
    const moved = await a.action(may.id, "reschedule", {
      scheduled_at: "2026-04-11T10:00:00Z",
      confirmed: true,
    });
    expectProblem(moved, 402, "public_usage_limit_reached");
  });

  test("the billing page names the limit, the setting it comes from and its default", async () => {
    const email = "x-limit-owner@example.com";
    await bootstrapAccount(s.herald, { email, workspaceName: "Limited", password: PASSWORD });
    const browser = new TestBrowser(s);
    await browser.signIn(email, PASSWORD);
    const screen = screenOf((await browser.get("/dashboard/billing")).text);
    const text = screen.text();
    expect(text).toContain("every feature is available");
    expect(text).toContain("Each workspace may publish at most 3 posts on X per calendar month (UTC).");
    expect(text).toContain(
      "This limit is not a billing plan's: it comes from the server's settings, chosen by whoever runs " +
        "this server (HERALD_X_MONTHLY_POST_LIMIT, set to 3 (the default is 50)).",
    );
  });
});

describe("the setting's default and its bad values", () => {
  test("unset, the limit is the contract's 50, and the page says it is the default", async () => {
    const s = await startTestServer();
    try {
      const r = await s.request("GET", "/v1/billing");
      expect(r.body.x_usage[0].limit).toBe(50);
      const email = "x-default-owner@example.com";
      await bootstrapAccount(s.herald, { email, workspaceName: "Default", password: PASSWORD });
      const browser = new TestBrowser(s);
      await browser.signIn(email, PASSWORD);
      const text = screenOf((await browser.get("/dashboard/billing")).text).text();
      expect(text).toContain("at most 50 posts on X");
      expect(text).toContain("(HERALD_X_MONTHLY_POST_LIMIT, at its default of 50)");
    } finally {
      await s.stop();
    }
  });

  test("a limit that is not a positive integer refuses to start, naming the setting", () => {
    for (const value of ["0", "-1", "fifty", "2.5"])
      expect(() =>
        loadConfig({ HERALD_DATA_DIR: "/tmp/unused", HERALD_X_MONTHLY_POST_LIMIT: value }),
      ).toThrow(
        new ConfigError(`HERALD_X_MONTHLY_POST_LIMIT must be an integer from 1 to 1000000, got "${value}"`),
      );
  });
});
