// The HTML forms (hosted pages and the dashboard) with a NUL character in a field, on SQLite and
// (npm run test:pg) PostgreSQL, whose text cannot hold one: never a 500, nothing stored. Browsers cannot
// send a NUL from a form, so such a form is refused as a whole, like any other malformed form.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { dashboardWorld, PASSWORD, submitPairs, type DashboardWorld } from "../dashboard/support.ts";
import { TestBrowser } from "../helpers/browser.ts";

let world: DashboardWorld;
beforeAll(async () => {
  world = await dashboardWorld();
});
afterAll(() => world.stop());

const NUL = "\u0000";

async function signupPath(): Promise<string> {
  const r = await world.s.request("POST", "/v1/signup-intents", {
    key: null,
    body: { email: `nul-${crypto.randomUUID()}@example.com`, workspace_name: "Fresh" },
  });
  expect(r.status).toBe(201);
  return new URL(r.body.signup_url).pathname;
}

/** A refused form: the page that says so, 403, never a 500. */
function expectRefused(where: string, r: { status: number; text: string }) {
  expect({ where, status: r.status }).toEqual({ where, status: 403 });
  expect(r.text).toContain("This form cannot be used");
}

describe("a NUL character in a form field", () => {
  test("sign-in: refused, and the right password still signs in afterwards", async () => {
    const browser = new TestBrowser(world.s);
    for (const [field, value] of [
      ["email", `${world.owner.email}${NUL}`],
      ["password", `${PASSWORD}${NUL}`],
    ] as const) {
      const fields = { email: world.owner.email, password: PASSWORD, [field]: value };
      expectRefused(`/login ${field}`, await browser.submit("/login", fields, "/login"));
    }
    const ok = await browser.submit("/login", { email: world.owner.email, password: PASSWORD }, "/login");
    expect(ok.status).toBe(303);
  });

  test("signup: refused, and no account is made", async () => {
    const path = await signupPath();
    const browser = new TestBrowser(world.s);
    const fields = { name: `Ann${NUL}`, password: PASSWORD, password_confirmation: PASSWORD };
    expectRefused("signup", await browser.submit(path, fields, path));
    const again = await browser.submit(path, { ...fields, name: "Ann" }, path);
    expect(again.status).toBe(303);
  });

  test("device code and dashboard forms: refused, nothing created", async () => {
    const browser = await world.signedIn();
    expectRefused("/device", await browser.submit("/device", { user_code: `BCDF${NUL}GHJK` }, "/device"));
    const before = (await world.s.request("GET", "/v1/workspaces", { key: world.owner.apiKey })).body.data;
    const r = await submitPairs(world.s, browser, "/dashboard/workspaces", "/dashboard/workspaces", [
      ["name", `Launch${NUL}`],
      ["time_zone", "UTC"],
    ]);
    expectRefused("/dashboard/workspaces", r);
    const after = (await world.s.request("GET", "/v1/workspaces", { key: world.owner.apiKey })).body.data;
    expect(after).toHaveLength(before.length);
  });
});
