// The webhooks pages against a real local receiver: adding an endpoint (its secret shown once), the
// endpoint page's settings, test event, delivery log with requests and responses, redelivery, a new
// secret, disabling and deleting; a member's read-only view, another account's workspace, CSRF.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startReceiver, runWebhooks, type Receiver } from "../webhooks/helpers.ts";
import {
  csrfTokenOf,
  dashboardWorld,
  type DashboardWorld,
  expectDashboardPage,
  hiddenFields,
  submitPairs,
  type TestBrowser,
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

const secretIn = (text: string) => /<code id="signing-secret">([^<]+)<\/code>/.exec(text)?.[1];

async function openPage(path: string, browser = owner) {
  const r = await browser.get(path);
  expect({ path, status: r.status }).toEqual({ path, status: 200 });
  expectDashboardPage(path, r);
  return r;
}

describe("the webhooks list", () => {
  test("renders without endpoints, with the add form and the contract's four event types", async () => {
    const r = await openPage(list);
    expect(r.text).toContain("No endpoint yet.");
    expect(r.text).toContain('aria-current="page">Webhooks</a>');
    for (const type of ["post.published", "post.failed", "post.awaiting-provider", "post.needs-attention"])
      expect(r.text).toContain(`name="event_types" value="${type}" checked>`);
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
      expect(r.text).toContain('<div class="errors" role="alert"');
      expect(r.text).toContain(`href="#f-${field}"`);
      expect(r.text).toMatch(new RegExp(`<p class="error" id="f-${field}-error">[^<]+</p>`));
      expect(r.text).toContain('value="Broken"');
      expect(r.text).toContain(`value="${fields[0]![1]}"`);
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
    expect(r.text).toContain('<button type="button" data-copy="signing-secret" hidden>Copy</button>');
    expect(r.text).toContain('<span id="signing-secret-status" role="status">');
    endpointPage = /href="(\/dashboard\/workspaces\/[^"]+\/webhooks\/wh_[^"]+)"/.exec(r.text)![1]!;
    // The same form sent again (a reload, a double click) acts once and does not show the secret.
    const again = await owner.post(list, fields);
    expect(again.status).toBe(200);
    expect(again.text).toContain("already added");
    expect(again.text).not.toContain(firstSecret);
    for (const path of [list, endpointPage]) expect((await openPage(path)).text).not.toContain(firstSecret);
    const listed = await openPage(list);
    expect(listed.text).toContain(`<code>${receiver.url}</code>`);
    expect(listed.text).toContain("None yet");
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
    expect(page.text).toContain("A test event is on its way");
    expect(page.text).toMatch(
      /<details class="delivery">\s*<summary>webhook\.test <span class="badge ok">succeeded/,
    );
    expect(page.text).toContain("HTTP 200");
    expect(page.text).toContain(`Service-Delivery-Id: ${sent.headers["service-delivery-id"]}`);
    expect(page.text).toContain(`POST ${receiver.url}`);
    // The body as the receiver got it, byte for byte (escaped for HTML).
    expect(page.text).toContain(sent.raw.replaceAll('"', "&#34;"));
    expect((await openPage(list)).text).toMatch(
      /webhook\.test <span class="badge ok">succeeded<\/span> HTTP 200/,
    );
  });

  test("a failed attempt shows its status and the next retry; the delivery can be sent again", async () => {
    receiver.statuses.push(500);
    await owner.submit(endpointPage, {}, `${endpointPage}/test`);
    await runWebhooks(world.s.server);
    const page = await openPage(endpointPage);
    expect(page.text).toMatch(/<summary>webhook\.test <span class="badge warn">pending<\/span> HTTP 500/);
    expect(page.text).toContain("<dt>Next retry</dt>");
    const deliveryId = /\/deliveries\/(dlv_[^/]+)\/redeliver/.exec(page.text)![1]!;
    const r = await owner.submit(endpointPage, {}, `${endpointPage}/deliveries/${deliveryId}/redeliver`);
    expect(r.location).toBe(`${endpointPage}?notice=redelivered`);
    await runWebhooks(world.s.server);
    const after = await openPage(endpointPage);
    expect(after.text).toContain(`(sent again from <code>${deliveryId}</code>)`);
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
    expect(bad.text).toMatch(/<p class="error" id="f-url-error">[^<]+<\/p>/);
    expect(bad.text).toContain('value="Renamed"');
    const r = await submitAll(owner, endpointPage, action, [
      ["name", "Renamed"],
      ["url", receiver.url],
      ...common,
    ]);
    expect(r.location).toBe(`${endpointPage}?notice=saved`);
    const page = await openPage(endpointPage);
    expect(page.text).toContain("<h1>Renamed</h1>");
    expect(page.text).toContain("Full (with the post&#39;s headline and body)");
    expect(page.text).toContain('value="post.failed" checked>');
    expect(page.text).not.toContain('value="post.needs-attention" checked>');
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
    expect(r.text).toContain("The endpoint changed since this page was opened");
    expect(r.text).toContain('value="Stale"');
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
    expect(page.text).toContain("the previous one signs too until");
    expect(page.text).toContain(`Ends in <code>${secret.slice(-4)}</code>`);
  });

  test("disabling stops test events and enabling brings them back", async () => {
    let r = await owner.submit(endpointPage, {}, `${endpointPage}/disable`);
    expect(r.location).toBe(`${endpointPage}?notice=disabled`);
    const page = await openPage(endpointPage);
    expect(page.text).toContain('<span class="badge neutral">Disabled</span>');
    expect(page.text).not.toContain(`${endpointPage}/test"`);
    const csrf_token = csrfTokenOf(page.text);
    r = await owner.post(`${endpointPage}/test`, { csrf_token, idempotency_key: "test-while-disabled" });
    expect(r.status).toBe(409);
    expectDashboardPage(endpointPage, r);
    r = await owner.submit(endpointPage, {}, `${endpointPage}/enable`);
    expect(r.location).toBe(`${endpointPage}?notice=enabled`);
    expect((await openPage(endpointPage)).text).toContain('<span class="badge ok">Enabled</span>');
  });
});

describe("who may use the pages", () => {
  test("a member reads the endpoints and their log, sees no forms; a forged form is refused", async () => {
    const member = await world.signedInAs("member");
    for (const path of [list, endpointPage]) {
      const r = await openPage(path, member);
      expect(r.text).not.toMatch(/<form method="post" action="\/dashboard\/workspaces/);
      expect(r.text).not.toContain("data-copy");
    }
    expect((await member.get(endpointPage)).text).toContain("Delivery log");
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
      expect(r.text).toContain("This form cannot be used");
    }
    expect((await owner.get(endpointPage)).status).toBe(200);
  });

  test("deleting the endpoint ends at the list; its page is gone", async () => {
    const r = await owner.submit(endpointPage, {}, `${endpointPage}/delete`);
    expect(r.location).toBe(`${list}?notice=deleted`);
    expect((await openPage(r.location!)).text).toContain("The endpoint is deleted");
    const gone = await owner.get(endpointPage);
    expect(gone.status).toBe(404);
    expectDashboardPage(endpointPage, gone);
  });
});
