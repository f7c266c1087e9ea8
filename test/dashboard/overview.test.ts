import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  attributeOf,
  dashboardWorld,
  type DashboardWorld,
  expectDashboardPage,
  headingOf,
  screenOf,
  TestBrowser,
} from "./support.ts";

let world: DashboardWorld;
beforeAll(async () => {
  world = await dashboardWorld();
});
afterAll(() => world.stop());

describe("the dashboard's frame", () => {
  test("without a session every dashboard path leads to sign-in and back", async () => {
    const r = await new TestBrowser(world.s).get("/dashboard/keys?x=1");
    expect(r.status).toBe(303);
    expect(r.location).toBe(`/login?next=${encodeURIComponent("/dashboard/keys?x=1")}`);
  });

  test("the overview lists the workspaces and the navigation marks the current section", async () => {
    const browser = await world.signedIn();
    const r = await browser.get("/dashboard");
    expect(r.status).toBe(200);
    expectDashboardPage("/dashboard", r);
    const screen = screenOf(r.text);
    const nav = screen.within(screen.getByRole("navigation", { name: "Dashboard" }));
    expect(attributeOf(nav.getByRole("link", { name: "Overview" }), "aria-current")).toBe("page");
    const main = screen.within(screen.getByRole("main"));
    const acme = main.getByRole("link", { name: "Acme" });
    expect(attributeOf(acme, "href")).toBe(`/dashboard/workspaces/${world.owner.workspaceId}/posts`);
    expect(main.queryByRole("link", { name: "Elsewhere" })).toBeNull();
    // Nowhere on the page, not even in a link or an attribute.
    expect(r.text).not.toContain(world.foreignWorkspaceId);
  });

  test("a form without this browser's token is refused with 403 and does nothing", async () => {
    const browser = await world.signedIn();
    const r = await browser.post("/dashboard/resend-confirmation", { csrf_token: "forged" });
    expect(r.status).toBe(403);
    expect(headingOf(r)).toBe("This form cannot be used");
  });

  test("the stylesheet and the script are served with their types", async () => {
    const css = await fetch(`${world.s.url}/pages/dashboard.css`);
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
    const js = await fetch(`${world.s.url}/pages/dashboard.js`);
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(await js.text()).toContain("data-copy");
  });

  test("sign out everywhere ends every session of the person, not those of others", async () => {
    const laptop = await world.signedIn();
    const phone = await world.signedIn();
    const colleague = await world.signedInAs("admin");
    const page = await laptop.get("/dashboard");
    const screen = screenOf(page.text);
    const sessions = screen.rowsOf(screen.getByRole("table", { name: "Your sessions" })).slice(1);
    expect(sessions.length).toBeGreaterThanOrEqual(2);
    expect(sessions.filter((cells) => cells[2] === "This browser")).toHaveLength(1);
    // An account page: times in UTC, named as such.
    for (const cells of sessions) expect(cells[0]).toMatch(/^\d{1,2} \w{3} \d{4}, \d{2}:\d{2} UTC$/);
    const r = await laptop.submit("/dashboard", {}, "/dashboard/sessions/close-all");
    expect(r.status).toBe(303);
    expect(r.location).toBe("/login?signed_out=1");
    expect(r.setCookies.some((c) => c.startsWith("herald_session=;") && c.includes("Max-Age=0"))).toBe(true);
    for (const gone of [laptop, phone]) expect((await gone.get("/dashboard")).status).toBe(303);
    expect((await colleague.get("/dashboard")).status).toBe(200);
  });
});
