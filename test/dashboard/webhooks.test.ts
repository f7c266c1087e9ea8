// The webhooks pages against a real local receiver: adding an endpoint (its secret shown once), the
// endpoint page's settings, test event, delivery log with requests and responses, redelivery, a new
// secret, disabling and deleting; a member's read-only view, another account's workspace, CSRF.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startReceiver, runWebhooks, type Receiver } from "../webhooks/helpers.ts";
import type { Screen } from "../helpers/screen.ts";
import {
  attributeOf,
  badgesIn,
  csrfTokenOf,
  dashboardWorld,
  type DashboardWorld,
  expectDashboardPage,
  formActionsOf,
  formOf,
  headingOf,
  hiddenFields,
  noticesOf,
  screenOf,
  submitPairs,
  type TestBrowser,
  textOf,
  valueOf,
} from "./support.ts";

let world: DashboardWorld;
let receiver: Receiver;
let owner: TestBrowser;
let list: string;
let endpointPage: string;
let firstSecret: string;

beforeAll(async () => {
  world = await dashboardWorld({ env: { HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1" } });
  receiver = startReceiver();
  owner = await world.signedIn();
  list = `/dashboard/workspaces/${world.owner.workspaceId}/webhooks`;
});
afterAll(async () => {
  await world.stop();
  await receiver.stop();
});

/** Posts a page's form like a browser, repeated fields (checkboxes) included. */
const submitAll = (browser: TestBrowser, pagePath: string, action: string, fields: [string, string][]) =>
  submitPairs(world.s, browser, pagePath, action, fields);

/** The signing secret a page shows once: the text its copy button copies (the button says so aloud). */
function secretIn(text: string): string | undefined {
  const screen = screenOf(text);
  const copy = screen.queryByRole("button", { name: "Copy", hidden: true });
  if (!copy) return undefined;
  const target = attributeOf(copy, "data-copy")!;
  expect(screen.getAllByRole("status").map((s) => attributeOf(s, "id"))).toContain(`${target}-status`);
  return textOf(screen.byId(target)!);
}

/** The deliveries of an endpoint's log, each opening from its summary line. */
function deliveriesOf(text: string) {
  const screen = screenOf(text);
  return screen.getAllByRole("group").flatMap((group) => {
    if (attributeOf(group, "class") !== "delivery") return [];
    const part = screen.within(group);
    return [{ summary: screen.nameOf(group), group, part, facts: part.definitions() }];
  });
}

/** The endpoints table of the list as records by column, with each record's row. */
function endpointsOf(screen: Screen) {
  const table = screen.queryByRole("table", { name: "Endpoints" });
  if (!table) return [];
  const rows = screen.within(table).getAllByRole("row").slice(1);
  return screen.recordsOf(table).map((cells, i) => ({ cells, row: rows[i]! }));
}

async function openPage(path: string, browser = owner) {
  const r = await browser.get(path);
  expect({ path, status: r.status }).toEqual({ path, status: 200 });
  expectDashboardPage(path, r);
  return r;
}

describe("the webhooks list", () => {
  test("renders without endpoints, with the add form and the contract's four event types", async () => {
    const r = await openPage(list);
    const screen = screenOf(r.text);
    expect(screen.text()).toContain("No endpoint yet.");
    expect(endpointsOf(screen)).toEqual([]);
    const nav = screen.within(screen.getByRole("navigation", { name: "Dashboard" }));
    expect(attributeOf(nav.getByRole("link", { name: "Webhooks" }), "aria-current")).toBe("page");
    const events = screen.within(screen.getByRole("group", { name: "Events" }));
    expect(events.namesOf("checkbox", { checked: true })).toEqual([
      "post.published",
      "post.failed",
      "post.awaiting-provider",
      "post.needs-attention",
    ]);
  });

  test.each([
    [
      "url",
      [
        ["url", "ftp://hooks.example.com/x"],
        ["event_types", "post.failed"],
      ],
    ],
    ["event_types", [["url", "https://hooks.example.com/x"]]],
  ] as [string, [string, string][]][])(
    "a refused form comes back with the problem next to %s, the values kept",
    async (field, fields) => {
      const r = await submitAll(owner, list, list, [
        ["name", "Broken"],
        ["destination_filter_mode", "all"],
        ["content_mode", "metadata"],
        ...fields,
      ]);
      expect(r.status).toBe(400);
      expectDashboardPage(list, r);
      const screen = screenOf(r.text);
      const control =
        field === "url" ? screen.getByLabelText("URL") : screen.getByRole("group", { name: "Events" });
      const summary = screen.within(screen.getByRole("alert", { name: "There is a problem" }));
      expect(summary.getAllByRole("link").map((a) => attributeOf(a, "href"))).toContain(
        `#${attributeOf(control, "id")}`,
      );
      const errorText = screen.descriptionOf(control);
      expect(errorText.length).toBeGreaterThan(0);
      expect(valueOf(screen.getByLabelText("Name"))).toBe("Broken");
      expect(valueOf(screen.getByLabelText("URL"))).toBe(fields[0]![1]);
    },
  );

  test("adding an endpoint shows its signing secret once, with a copy button, and never again", async () => {
    const opened = await owner.get(list);
    const fields = {
      ...hiddenFields(opened.text, list),
      name: "Receiver",
      url: receiver.url,
      event_types: "post.published",
      destination_filter_mode: "all",
      content_mode: "metadata",
    };
    const r = await owner.post(list, fields);
    expect(r.status).toBe(201);
    expectDashboardPage(list, r);
    firstSecret = secretIn(r.text)!;
    expect(firstSecret.length).toBeGreaterThan(20);
    endpointPage = attributeOf(screenOf(r.text).getByRole("link", { name: "Open the endpoint" }), "href")!;
    expect(endpointPage).toMatch(/^\/dashboard\/workspaces\/[^/]+\/webhooks\/wh_[^/]+$/);
    // The same form sent again (a reload, a double click) acts once and does not show the secret.
    const again = await owner.post(list, fields);
    expect(again.status).toBe(200);
    expect(headingOf(again)).toBe("This endpoint was already added");
    expect(secretIn(again.text)).toBeUndefined();
    expect(again.text).not.toContain(firstSecret);
    for (const path of [list, endpointPage]) expect((await openPage(path)).text).not.toContain(firstSecret);
    const listed = await openPage(list);
    expect(endpointsOf(screenOf(listed.text)).map(({ cells }) => cells)).toEqual([
      expect.objectContaining({ Name: "Receiver", URL: receiver.url, "Last delivery": "None yet" }),
    ]);
  });
});

describe("an endpoint's page", () => {
  test("a test event is delivered and shows in the log with its request and response", async () => {
    const r = await owner.submit(endpointPage, {}, `${endpointPage}/test`);
    expect(r.location).toBe(`${endpointPage}?notice=test_sent`);
    await runWebhooks(world.s.server);
    expect(receiver.received.length).toBe(1);
    const sent = receiver.received[0]!;
    const page = await openPage(r.location!);
    expect(noticesOf(page)[0]).toStartWith("A test event is on its way");
    const [delivery, ...older] = deliveriesOf(page.text);
    expect(older).toEqual([]);
    expect(delivery!.summary).toStartWith("webhook.test succeeded HTTP 200 · 1 attempt");
    expect(badgesIn(delivery!.group)[0]).toEqual({ text: "succeeded", tone: "ok" });
    const [request, body] = delivery!.part.preformatted();
    expect(request).toStartWith(`POST ${receiver.url}\n`);
    expect(request).toContain(`Service-Delivery-Id: ${sent.headers["service-delivery-id"]}\n`);
    // The body as the receiver got it, byte for byte.
    expect(body).toBe(sent.raw);
    const [endpoint] = endpointsOf(screenOf((await openPage(list)).text));
    expect(endpoint!.cells["Last delivery"]).toStartWith("webhook.test succeeded HTTP 200");
    expect(badgesIn(endpoint!.row)).toContainEqual({ text: "succeeded", tone: "ok" });
  });

  test("a failed attempt shows its status and the next retry; the delivery can be sent again", async () => {
    receiver.statuses.push(500);
    await owner.submit(endpointPage, {}, `${endpointPage}/test`);
    await runWebhooks(world.s.server);
    const page = await openPage(endpointPage);
    const [failed] = deliveriesOf(page.text);
    expect(failed!.summary).toStartWith("webhook.test pending HTTP 500");
    expect(badgesIn(failed!.group)[0]).toEqual({ text: "pending", tone: "warn" });
    expect(Object.keys(failed!.facts)).toContain("Next retry");
    const again = formOf(failed!.part.getByRole("button", { name: "Send again" }))!;
    const deliveryId = /\/deliveries\/(dlv_[^/]+)\/redeliver$/.exec(attributeOf(again, "action")!)![1]!;
    expect(failed!.facts.Delivery).toBe(deliveryId);
    const r = await owner.submit(endpointPage, {}, `${endpointPage}/deliveries/${deliveryId}/redeliver`);
    expect(r.location).toBe(`${endpointPage}?notice=redelivered`);
    await runWebhooks(world.s.server);
    const after = await openPage(endpointPage);
    expect(deliveriesOf(after.text)[0]!.facts.Delivery).toMatch(
      new RegExp(`^dlv_\\S+ \\(sent again from ${deliveryId}\\)$`),
    );
    expect(receiver.received.at(-1)!.headers["service-event-id"]).toBe(
      receiver.received.at(-2)!.headers["service-event-id"],
    );
  });

  test("the settings are saved with several event types; a bad URL comes back at its field", async () => {
    const action = endpointPage;
    const common: [string, string][] = [
      ["destination_filter_mode", "all"],
      ["content_mode", "full"],
      ["event_types", "post.published"],
      ["event_types", "post.failed"],
    ];
    const bad = await submitAll(owner, endpointPage, action, [
      ["name", "Renamed"],
      ["url", "not a url"],
      ...common,
    ]);
    expect(bad.status).toBe(400);
    expectDashboardPage(endpointPage, bad);
    const badScreen = screenOf(bad.text);
    const url = badScreen.getByLabelText("URL");
    expect(attributeOf(url, "aria-invalid")).toBe("true");
    expect(badScreen.descriptionOf(url).length).toBeGreaterThan(0);
    expect(valueOf(badScreen.getByLabelText("Name"))).toBe("Renamed");
    const r = await submitAll(owner, endpointPage, action, [
      ["name", "Renamed"],
      ["url", receiver.url],
      ...common,
    ]);
    expect(r.location).toBe(`${endpointPage}?notice=saved`);
    const page = await openPage(endpointPage);
    expect(headingOf(page)).toBe("Renamed");
    const screen = screenOf(page.text);
    expect(screen.definitions().Content).toBe("Full (with the post's headline and body)");
    const events = screen.within(screen.getByRole("group", { name: "Events" }));
    expect(events.namesOf("checkbox", { checked: true })).toEqual(["post.published", "post.failed"]);
  });

  test("saving over a change made meanwhile is refused, keeping what was typed", async () => {
    const r = await submitAll(owner, endpointPage, endpointPage, [
      ["name", "Stale"],
      ["url", receiver.url],
      ["event_types", "post.published"],
      ["destination_filter_mode", "all"],
      ["content_mode", "metadata"],
      ["etag", 'W/"outdated"'],
    ]);
    expect(r.status).toBe(412);
    const screen = screenOf(r.text);
    expect(screen.within(screen.getByRole("alert")).text()).toContain(
      "The endpoint changed since this page was opened",
    );
    expect(valueOf(screen.getByLabelText("Name"))).toBe("Stale");
  });

  test("rotating the secret shows the new one once; the old one keeps signing for a while", async () => {
    const r = await owner.submit(endpointPage, {}, `${endpointPage}/rotate-secret`);
    expect(r.status).toBe(200);
    expectDashboardPage(endpointPage, r);
    const secret = secretIn(r.text)!;
    expect(secret).toBeDefined();
    expect(secret).not.toBe(firstSecret);
    const page = await openPage(endpointPage);
    expect(page.text).not.toContain(secret);
    const signing = screenOf(page.text).definitions()["Signing secret"]!;
    expect(signing).toStartWith(`Ends in ${secret.slice(-4)}; the previous one signs too until `);
  });

  test("disabling stops test events and enabling brings them back", async () => {
    let r = await owner.submit(endpointPage, {}, `${endpointPage}/disable`);
    expect(r.location).toBe(`${endpointPage}?notice=disabled`);
    const page = await openPage(endpointPage);
    const screen = screenOf(page.text);
    expect(screen.definitions().Status).toBe("Disabled");
    expect(badgesIn(screen.getByRole("main"))[0]).toEqual({ text: "Disabled", tone: "neutral" });
    expect(screen.queryByRole("button", { name: "Send a test event" })).toBeNull();
    expect(formActionsOf(screen)).not.toContain(`${endpointPage}/test`);
    const csrf_token = csrfTokenOf(page.text);
    r = await owner.post(`${endpointPage}/test`, { csrf_token, idempotency_key: "test-while-disabled" });
    expect(r.status).toBe(409);
    expectDashboardPage(endpointPage, r);
    r = await owner.submit(endpointPage, {}, `${endpointPage}/enable`);
    expect(r.location).toBe(`${endpointPage}?notice=enabled`);
    const enabled = screenOf((await openPage(endpointPage)).text);
    expect(enabled.definitions().Status).toBe("Enabled");
    expect(badgesIn(enabled.getByRole("main"))[0]).toEqual({ text: "Enabled", tone: "ok" });
  });
});

describe("who may use the pages", () => {
  test("a member reads the endpoints and their log, sees no forms; a forged form is refused", async () => {
    const member = await world.signedInAs("member");
    for (const path of [list, endpointPage]) {
      const r = await openPage(path, member);
      const screen = screenOf(r.text);
      expect(formActionsOf(screen)).toEqual(["/logout"]);
      expect(screen.queryByRole("button", { name: "Copy", hidden: true })).toBeNull();
    }
    const logPage = screenOf((await member.get(endpointPage)).text);
    expect(logPage.getByRole("heading", { name: "Delivery log" })).toBeDefined();
    expect(deliveriesOf((await member.get(endpointPage)).text).length).toBeGreaterThan(0);
    const csrf_token = csrfTokenOf((await member.get(list)).text);
    for (const action of [
      list,
      `${endpointPage}/test`,
      `${endpointPage}/rotate-secret`,
      `${endpointPage}/delete`,
    ]) {
      const r = await member.post(action, {
        csrf_token,
        idempotency_key: `m-${action}`,
        name: "x",
        url: receiver.url,
      });
      expect({ action, status: r.status }).toEqual({ action, status: 403 });
    }
  });

  test("another account's workspace is not found", async () => {
    const foreign = `/dashboard/workspaces/${world.foreignWorkspaceId}/webhooks`;
    const endpointId = endpointPage.split("/").at(-1);
    for (const path of [foreign, `${foreign}/${endpointId}`]) {
      const r = await owner.get(path);
      expect({ path, status: r.status }).toEqual({ path, status: 404 });
      expectDashboardPage(path, r);
    }
  });

  test("a form without this browser's CSRF token is refused", async () => {
    for (const action of [list, `${endpointPage}/delete`, `${endpointPage}/rotate-secret`]) {
      const r = await owner.post(action, { csrf_token: "forged" });
      expect({ action, status: r.status }).toEqual({ action, status: 403 });
      expect(headingOf(r)).toBe("This form cannot be used");
    }
    expect((await owner.get(endpointPage)).status).toBe(200);
  });

  test("deleting the endpoint ends at the list; its page is gone", async () => {
    const r = await owner.submit(endpointPage, {}, `${endpointPage}/delete`);
    expect(r.location).toBe(`${list}?notice=deleted`);
    const after = await openPage(r.location!);
    expect(noticesOf(after)[0]).toStartWith("The endpoint is deleted");
    expect(endpointsOf(screenOf(after.text))).toEqual([]);
    const gone = await owner.get(endpointPage);
    expect(gone.status).toBe(404);
    expectDashboardPage(endpointPage, gone);
  });
});
