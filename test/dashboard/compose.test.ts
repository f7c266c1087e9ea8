// The compose page: a thread with media uploaded through the form (no script), per-network options,
// draft, queue and a local schedule time, the API's errors next to their fields, and its upload routes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createCrc64Nvme, crc64nvmeToBase64 } from "../../src/lib/crc64nvme.ts";
import { DASHBOARD_JS } from "../../src/http/dashboard/script.ts";
import { FormRefused, readMultipartForm } from "../../src/http/dashboard/multipart.ts";
import { DASHBOARD_UPLOAD_MAX_BYTES } from "../../src/http/dashboard/uploads.ts";
import { startBlueskyFake, type BlueskyFake } from "../fakes/bluesky.ts";
import { daily, insertAsset, insertXDestination, makePng, X_APP_ENV } from "../posts/fixtures.ts";
import {
  attributeOf,
  connectOwnersBluesky,
  dashboardWorld,
  type DashboardWorld,
  expectDashboardPage,
  headingOf,
  hiddenFields,
  noticesOf,
  screenOf,
  TestBrowser,
  valueOf,
} from "./support.ts";
import type { PageResponse } from "../helpers/browser.ts";
import { textOf, type Screen } from "../helpers/screen.ts";
import type { Element } from "domhandler";

let world: DashboardWorld;
let bluesky: BlueskyFake;
let ws: string;
let alice: string;
let xDestination: string;
let owner: TestBrowser;
let page: string;

/** The API as the dashboard's owner (their own account's key). */
const v1 = (method: string, path: string, body?: unknown) =>
  world.s.request(method, `/v1/workspaces/${ws}${path}`, { key: world.owner.apiKey, body });

beforeAll(async () => {
  world = await dashboardWorld({ env: { HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1", ...X_APP_ENV } });
  ws = world.owner.workspaceId;
  page = `/dashboard/workspaces/${ws}/posts/new`;
  bluesky = await startBlueskyFake();
  alice = await connectOwnersBluesky(world, bluesky);
  xDestination = await insertXDestination(world.s, ws);
  expect((await v1("PATCH", "", { time_zone: "Europe/Berlin" })).status).toBe(200);
  owner = await world.signedIn();
});
afterAll(async () => {
  await world.stop();
  await bluesky.stop();
});

/** Posts the compose form as a browser does (multipart), with the page's hidden fields first. */
function postMultipart(
  browser: TestBrowser,
  from: string,
  fields: [string, string][],
  files: { name: string; file: File }[] = [],
  options: { withoutCsrf?: boolean } = {},
): Promise<PageResponse> {
  const form = new FormData();
  const typed = new Set(fields.map(([name]) => name));
  for (const [name, value] of Object.entries(hiddenFields(from, page)))
    if (!typed.has(name) && !(options.withoutCsrf && name === "csrf_token")) form.append(name, value);
  for (const [name, value] of fields) form.append(name, value);
  for (const f of files) form.append(f.name, f.file);
  return browser.send("POST", page, form);
}

/** Posts the form urlencoded: the page's hidden fields (attached media among them) and `fields`. */
function postForm(
  browser: TestBrowser,
  from: string,
  fields: Record<string, string>,
  extra: [string, string][] = [],
) {
  const body = new URLSearchParams({ ...hiddenFields(from, page), ...fields });
  for (const [n, v] of extra) body.append(n, v);
  const cookie = [...browser.cookies].map(([n, v]) => `${n}=${v}`).join("; ");
  return fetch(world.s.url + page, {
    method: "POST",
    headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
    body: body.toString(),
    redirect: "manual",
  }).then(async (r) => ({
    status: r.status,
    text: await r.text(),
    location: r.headers.get("location"),
    headers: r.headers,
  }));
}

/** The items of the compose form as shown: each group's name, its text and what is attached to it. */
function itemsOf(page: string | Screen) {
  const screen = typeof page === "string" ? screenOf(page) : page;
  return screen.getAllByRole("group", { name: /^Item \d+ / }).map((group) => {
    const item = screen.within(group);
    const attached = item.getAllByRole("list").find((list) => attributeOf(list, "class") === "attached");
    return {
      name: screen.nameOf(group),
      text: valueOf(item.getByLabelText("Text")),
      textBox: item.getByLabelText("Text"),
      attached: attached ? screen.within(attached).namesOf("listitem") : [],
    };
  });
}

/** What the error summary and the field itself say about a field (found as a person finds it). */
function problemAt(screen: Screen, field: Element) {
  const summary = screen.within(screen.getByRole("alert", { name: "There is a problem" }));
  const leadsThere = summary
    .getAllByRole("link")
    .some((a) => attributeOf(a, "href") === `#${attributeOf(field, "id")}`);
  return { leadsThere, said: screen.descriptionOf(field) };
}
const postIdOf = (location: string | null) => /\/posts\/(send_[A-Za-z0-9]+)/.exec(location ?? "")?.[1];

describe("the compose page", () => {
  test("renders with the destinations, the first item and the when choices", async () => {
    const r = await owner.get(page);
    expect(r.status).toBe(200);
    expectDashboardPage(page, r);
    const screen = screenOf(r.text);
    const nav = screen.within(screen.getByRole("navigation", { name: "Dashboard" }));
    expect(attributeOf(nav.getByRole("link", { name: "Compose" }), "aria-current")).toBe("page");
    const destinations = screen.within(screen.getByRole("group", { name: "Destinations" }));
    expect(destinations.namesOf("checkbox")).toEqual(expect.arrayContaining(["alice.test", "Herald on X"]));
    expect(attributeOf(screen.getByRole("form", { name: "Compose a post" }), "enctype")).toBe(
      "multipart/form-data",
    );
    expect(screen.getByLabelText("Date and time (Europe/Berlin)")).toBeDefined();
    expect(itemsOf(r.text).map((item) => [item.name, item.text])).toEqual([["Item 1 (the post)", ""]]);
  });

  test("a thread of three with an uploaded image, scheduled at a local time", async () => {
    const opened = await owner.get(page);
    const texts: [string, string][] = [
      ["item_count", "3"],
      ["destination_ids", alice],
      ["item_0_text", "First of three"],
      ["item_1_text", "Second, with a picture"],
      ["item_2_text", "Third"],
      ["op", "upload"],
    ];
    const png = new File([makePng(6, 4)], "chart.png", { type: "image/png" });
    const uploaded = await postMultipart(owner, opened.text, texts, [{ name: "item_1_file", file: png }]);
    expect(uploaded.status).toBe(200);
    expectDashboardPage(page, uploaded);
    expect(noticesOf(uploaded)).toContain("chart.png is attached to item 2.");
    const assetId = hiddenFields(uploaded.text, page).item_1_media;
    expect(assetId).toMatch(/^ast_[A-Za-z0-9]+$/);
    const items = itemsOf(uploaded.text);
    expect(items.map((item) => item.text)).toEqual(["First of three", "Second, with a picture", "Third"]);
    expect(items[1]!.attached).toEqual([
      "chart.png (image/png, 6x4) Alt text for chart.png (image/png, 6x4) Sent to Bluesky; describe the " +
        "image for people who cannot see it. Detach chart.png (image/png, 6x4)",
    ]);
    // The image's one alt text field sits with it in its item, naming the chosen networks that take it;
    // Bluesky is chosen: its options are shown, X's (not chosen) are on the page but hidden.
    const screen = screenOf(uploaded.text);
    const alt = screen.getByLabelText("Alt text for chart.png (image/png, 6x4)");
    expect(attributeOf(alt, "name")).toBe(`alt_${assetId}`);
    expect(screen.getByRole("group", { name: "Bluesky" })).toBeDefined();
    expect(screen.queryByRole("group", { name: "X" })).toBeNull();
    expect(screen.queryByRole("group", { name: "LinkedIn" })).toBeNull();

    const created = await postForm(
      owner,
      uploaded.text,
      {
        item_0_text: "First of three",
        item_1_text: "Second, with a picture",
        item_2_text: "Third",
        when: "at",
        at: "2026-03-05T09:30",
        [`alt_${assetId}`]: "A small chart",
        opt_bluesky_languages: "en, de",
        op: "create",
      },
      [["destination_ids", alice]],
    );
    expect({ status: created.status, text: created.status === 303 ? "" : created.text }).toEqual({
      status: 303,
      text: "",
    });
    const id = postIdOf(created.location);
    expect(created.location).toBe(`/dashboard/workspaces/${ws}/posts/${id}?notice=created`);
    expect(noticesOf(await owner.get(created.location!))).toEqual(["The post is created."]);
    const post = (await v1("GET", `/posts/${id}`)).body;
    expect(post.state).toBe("scheduled");
    expect(post.scheduled_at).toBe("2026-03-05T08:30:00.000Z"); // 09:30 in Berlin (UTC+1)
    expect(post.time_zone).toBe("Europe/Berlin");
    expect(post.payload.body).toEqual(["First of three", "Second, with a picture", "Third"]);
    expect(post.payload.destination_options.bluesky).toEqual({
      languages: ["en", "de"],
      alt_text_by_asset_id: { [assetId!]: "A small chart" },
    });
    expect(post.assets).toEqual([
      expect.objectContaining({ id: assetId, content_type: "image/png", item_index: 1 }),
    ]);
    const asset = (await v1("GET", `/assets/${assetId}`)).body;
    expect({ status: asset.status, label: asset.label, dimensions: asset.dimensions }).toEqual({
      status: "ready",
      label: "chart.png",
      dimensions: "6x4",
    });
  });

  test("adding and removing items keeps what was typed; detaching keeps the rest", async () => {
    const opened = await owner.get(page);
    const added = await postForm(owner, opened.text, {
      item_count: "2",
      item_0_text: "keep me",
      item_1_text: "and me",
      op: "add",
    });
    expect(added.status).toBe(200);
    expect(hiddenFields(added.text, page).item_count).toBe("3");
    expect(itemsOf(added.text).map((item) => [item.name, item.text])).toEqual([
      ["Item 1 (the post)", "keep me"],
      ["Item 2 (reply)", "and me"],
      ["Item 3 (reply)", ""],
    ]);
    expect(attributeOf(itemsOf(added.text)[2]!.textBox, "name")).toBe("item_2_text");
    const removed = await postForm(owner, added.text, {
      item_0_text: "keep me",
      item_1_text: "drop me",
      item_2_text: "third stays",
      op: "remove:1",
    });
    expect(removed.status).toBe(200);
    expect(hiddenFields(removed.text, page).item_count).toBe("2");
    expect(removed.text).not.toContain("drop me");
    const kept = itemsOf(removed.text);
    expect(kept.map((item) => item.text)).toEqual(["keep me", "third stays"]);
    expect(attributeOf(kept[1]!.textBox, "name")).toBe("item_1_text");

    const assetId = await insertAsset(world.s, ws, { label: "library.png" });
    const attached = await postForm(owner, removed.text, {
      item_0_text: "keep me",
      item_1_text: "third stays",
      item_1_add: assetId,
      op: "attach",
    });
    expect(attached.status).toBe(200);
    expect(hiddenFields(attached.text, page).item_1_media).toBe(assetId);
    expect(itemsOf(attached.text)[1]!.attached[0]).toStartWith("library.png");
    const detached = await postForm(owner, attached.text, {
      item_0_text: "keep me",
      item_1_text: "third stays",
      op: `detach:1:${assetId}`,
    });
    expect(detached.status).toBe(200);
    expect(hiddenFields(detached.text, page).item_1_media).toBeUndefined();
    const afterDetach = itemsOf(detached.text);
    expect(afterDetach[1]).toMatchObject({ text: "third stays", attached: [] });
  });

  test.each([
    {
      name: "an over-long text on item 2 (X)",
      fields: { item_count: "2", item_0_text: "fine", item_1_text: "x".repeat(300) } as Record<
        string,
        string
      >,
      destinations: () => [xDestination],
      when: "at",
      field: (screen: Screen) => itemsOf(screen)[1]!.textBox,
      expected: /^Herald on X: /,
      status: 422,
    },
    {
      name: "no destination",
      fields: { item_count: "1", item_0_text: "hello" } as Record<string, string>,
      destinations: () => [],
      when: "draft",
      field: (screen: Screen) => screen.getByRole("group", { name: "Destinations" }),
      expected: /Choose at least one destination/,
      status: 400,
    },
    {
      name: "a schedule time in the past",
      fields: { item_count: "1", item_0_text: "too late", at: "2026-02-01T10:00" } as Record<string, string>,
      destinations: () => [alice],
      when: "at",
      field: (screen: Screen) => screen.getByLabelText("Date and time (Europe/Berlin)"),
      expected: /is in the past/,
      status: 422,
    },
    {
      name: "a local time the clocks skip (the workspace is in Europe/Berlin)",
      fields: { item_count: "1", item_0_text: "in the gap", at: "2026-03-29T02:30" } as Record<
        string,
        string
      >,
      destinations: () => [alice],
      when: "at",
      field: (screen: Screen) => screen.getByLabelText("Date and time (Europe/Berlin)"),
      expected: new RegExp(
        "^2026-03-29T02:30 does not exist in Europe/Berlin: the clocks move forward from \\+01:00 to " +
          "\\+02:00 that day; choose another time\\.$",
      ),
      status: 400,
    },
  ])("validation errors land next to their field: $name", async (c) => {
    const opened = await owner.get(page);
    const fields = {
      ...c.fields,
      when: c.when,
      at: "at" in c.fields ? c.fields.at! : "2026-03-10T12:00",
      op: "create",
    };
    const r = await postForm(
      owner,
      opened.text,
      fields,
      c.destinations().map((d): [string, string] => ["destination_ids", d]),
    );
    expect(r.status).toBe(c.status);
    expectDashboardPage(page, { ...r, headers: r.headers });
    const screen = screenOf(r.text);
    const problem = problemAt(screen, c.field(screen));
    expect(problem.leadsThere).toBe(true);
    expect(
      problem.said.replace(
        new RegExp(
          "^For “Schedule at a time”: the time in Europe/Berlin, the workspace's time zone " +
            "\\(it is \\w{3} \\d{1,2} \\w{3} \\d\\d:\\d\\d there now\\)\\. ",
        ),
        "",
      ),
    ).toMatch(c.expected);
    // What was typed is kept.
    expect(itemsOf(r.text)[0]!.text).toBe(c.fields.item_0_text!);
    if ("at" in c.fields)
      expect(valueOf(screen.getByLabelText("Date and time (Europe/Berlin)"))).toBe(c.fields.at!);
  });

  test("Check shows the same errors without storing anything, or says there are none", async () => {
    const opened = await owner.get(page);
    const before = (await v1("GET", "/posts?limit=100")).body.data.length;
    const bad = await postForm(
      owner,
      opened.text,
      { item_count: "1", item_0_text: "see https://example.com", when: "now", op: "check" },
      [["destination_ids", xDestination]],
    );
    expect(bad.status).toBe(422);
    const badScreen = screenOf(bad.text);
    expect(problemAt(badScreen, itemsOf(bad.text)[0]!.textBox).said).toStartWith("Herald on X: ");
    const good = await postForm(
      owner,
      opened.text,
      { item_count: "1", item_0_text: "plain words", when: "now", op: "check" },
      [["destination_ids", xDestination]],
    );
    expect(good.status).toBe(200);
    expect(noticesOf(good)).toContain("No problems found.");
    expect((await v1("GET", "/posts?limit=100")).body.data.length).toBe(before);
  });

  test("Check with “Save as a draft” says the draft can be saved and shows what publishing would refuse", async () => {
    const opened = await owner.get(page);
    const before = (await v1("GET", "/posts?limit=100")).body.data.length;
    const r = await postForm(
      owner,
      opened.text,
      { item_count: "1", item_0_text: "b".repeat(600), when: "draft", op: "check" },
      [["destination_ids", alice]],
    );
    expect(r.status).toBe(200);
    expect(noticesOf(r)).toContain(
      "The draft can be saved as it is, but publishing it would be refused for the problems shown.",
    );
    const screen = screenOf(r.text);
    const problem = problemAt(screen, itemsOf(r.text)[0]!.textBox);
    expect(problem.leadsThere).toBe(true);
    expect(problem.said).toContain("alice.test: text is 600 characters; Bluesky allows 300");
    expect((await v1("GET", "/posts?limit=100")).body.data.length).toBe(before);
  });

  test("save as a draft", async () => {
    const opened = await owner.get(page);
    const r = await postForm(
      owner,
      opened.text,
      { item_count: "1", item_0_text: "a draft", when: "draft", op: "create" },
      [["destination_ids", alice]],
    );
    expect(r.status).toBe(303);
    const post = (await v1("GET", `/posts/${postIdOf(r.location)}`)).body;
    expect({ state: post.state, body: post.payload.body, scheduled_at: post.scheduled_at }).toEqual({
      state: "draft",
      body: ["a draft"],
      scheduled_at: null,
    });
  });

  test("add to the queue", async () => {
    expect((await v1("PUT", "/queue", { windows: daily("09:00") })).status).toBe(200);
    const opened = await owner.get(page);
    const r = await postForm(
      owner,
      opened.text,
      { item_count: "1", item_0_text: "queued", when: "queue", op: "create" },
      [["destination_ids", alice]],
    );
    expect(r.status).toBe(303);
    const post = (await v1("GET", `/posts/${postIdOf(r.location)}`)).body;
    expect(post.state).toBe("scheduled");
    expect(post.schedule_mode).toBe("queue");
    expect(post.scheduled_at).toBe("2026-03-02T08:00:00.000Z"); // the next 09:00 in Berlin
  });

  test("a form without this browser's token is refused (urlencoded and multipart)", async () => {
    const opened = await owner.get(page);
    const plain = await owner.post(page, {
      item_count: "1",
      item_0_text: "x",
      op: "create",
      csrf_token: "forged",
    });
    expect(plain.status).toBe(403);
    const png = new File([makePng()], "a.png", { type: "image/png" });
    const multipart = await postMultipart(
      owner,
      opened.text,
      [["op", "upload"]],
      [{ name: "item_0_file", file: png }],
      {
        withoutCsrf: true,
      },
    );
    expect(multipart.status).toBe(403);
    expect(headingOf(multipart)).toBe("This form cannot be used");
  });

  test("a member can compose (posts:write)", async () => {
    const member = await world.signedInAs("member");
    const opened = await member.get(page);
    expect(opened.status).toBe(200);
    expectDashboardPage(page, opened);
    const r = await postForm(
      member,
      opened.text,
      { item_count: "1", item_0_text: "by a member", when: "draft", op: "create" },
      [["destination_ids", xDestination]],
    );
    expect(r.status).toBe(303);
  });

  test("a workspace of another account is 404", async () => {
    const foreign = `/dashboard/workspaces/${world.foreignWorkspaceId}/posts/new`;
    expect((await owner.get(foreign)).status).toBe(404);
    const opened = await owner.get(page);
    const r = await owner.post(foreign, { ...hiddenFields(opened.text, page), op: "create" });
    expect(r.status).toBe(404);
    expect(
      (await owner.send("POST", `/dashboard/workspaces/${world.foreignWorkspaceId}/uploads/file`)).status,
    ).toBe(404);
  });
});

describe("the upload routes", () => {
  const csrfOf = async (browser: TestBrowser) =>
    hiddenFields((await browser.get(page)).text, page).csrf_token!;
  const send = (
    browser: TestBrowser,
    path: string,
    init: { headers?: Record<string, string>; body?: Uint8Array | string },
  ) => {
    const cookie = [...browser.cookies].map(([n, v]) => `${n}=${v}`).join("; ");
    return fetch(world.s.url + path, {
      method: "POST",
      ...init,
      headers: { cookie, ...init.headers },
      redirect: "manual",
    });
  };

  test("the form refuses a file over the limit", async () => {
    const opened = await owner.get(page);
    const big = new File([new Uint8Array(DASHBOARD_UPLOAD_MAX_BYTES + 1)], "big.png", { type: "image/png" });
    const r = await postMultipart(
      owner,
      opened.text,
      [["op", "upload"]],
      [{ name: "item_0_file", file: big }],
    );
    expect(r.status).toBe(413);
    expect(screenOf(r.text).text()).toContain("larger than 32 MiB");
  });

  test("the script's file route: no CSRF header or oversize is refused, a PNG is stored", async () => {
    const csrf = await csrfOf(owner);
    const path = `/dashboard/workspaces/${ws}/uploads/file`;
    const headers = {
      "content-type": "image/png",
      "x-file-name": "via-script.png",
      "x-idempotency-key": "script-key-0001",
    };
    const refused = await send(owner, path, { headers, body: makePng() });
    expect(refused.status).toBe(403);
    const big = await send(owner, path, {
      headers: { ...headers, "x-csrf-token": csrf },
      body: new Uint8Array(DASHBOARD_UPLOAD_MAX_BYTES + 1),
    });
    expect(big.status).toBe(413);
    const stored = await send(owner, path, {
      headers: { ...headers, "x-csrf-token": csrf },
      body: makePng(5, 5),
    });
    expect(stored.status).toBe(200);
    const asset: any = await stored.json();
    expect({ status: asset.status, label: asset.label, dimensions: asset.dimensions }).toEqual({
      status: "ready",
      label: "via-script.png",
      dimensions: "5x5",
    });
  });

  test("the script's direct flow: start through the dashboard, send the part, complete", async () => {
    const csrf = await csrfOf(owner);
    const bytes = makePng(7, 3);
    const crc = await createCrc64Nvme();
    crc.update(bytes);
    const checksum = crc64nvmeToBase64(crc.digest());
    const base = `/dashboard/workspaces/${ws}/uploads`;
    const json = { "content-type": "application/json" };
    const body = {
      kind: "card",
      file_name: "direct.png",
      content_type: "image/png",
      byte_size: bytes.length,
      parts: [{ part_number: 1, checksum_crc64nvme: checksum }],
      idempotency_key: "direct-start-0001",
    };
    expect((await send(owner, base, { headers: json, body: JSON.stringify(body) })).status).toBe(403);
    const started = await send(owner, base, {
      headers: { ...json, "x-csrf-token": csrf },
      body: JSON.stringify(body),
    });
    expect(started.status).toBe(201);
    const upload: any = await started.json();
    const part = upload.parts[0];
    expect(new URL(part.upload_url).origin).toBe(new URL(world.s.url).origin);
    const put = await fetch(part.upload_url, { method: "PUT", headers: part.required_headers, body: bytes });
    expect(put.status).toBe(200);
    const completed = await send(owner, `${base}/${upload.id}/complete`, {
      headers: { ...json, "x-csrf-token": csrf },
      body: JSON.stringify({
        byte_size: bytes.length,
        checksum_crc64nvme: checksum,
        parts: [{ part_number: 1, etag: put.headers.get("etag"), checksum_crc64nvme: checksum }],
        idempotency_key: "direct-complete-0001",
      }),
    });
    expect(completed.status).toBe(200);
    expect(((await completed.json()) as any).status).toBe("ready");
  });
});

describe("the compose script", () => {
  test("computes the same part and whole-file CRC64NVME as Herald, a MiB at a time", async () => {
    const source = DASHBOARD_JS.slice(
      DASHBOARD_JS.indexOf("/* crc64nvme:start */"),
      DASHBOARD_JS.indexOf("/* crc64nvme:end */"),
    );
    const { checksums } = new Function("PART", `${source}; return { checksums };`)(5 * 1024 * 1024);
    const bytes = new Uint8Array(11 * 1024 * 1024 + 17).map((_, i) => (i * 31 + (i >> 9)) & 255);
    const crc = async (b: Uint8Array) => {
      const c = await createCrc64Nvme();
      c.update(b);
      return crc64nvmeToBase64(c.digest());
    };
    const part = 5 * 1024 * 1024;
    const expected = {
      parts: [
        await crc(bytes.subarray(0, part)),
        await crc(bytes.subarray(part, 2 * part)),
        await crc(bytes.subarray(2 * part)),
      ],
      whole: await crc(bytes),
    };
    expect(await checksums(new Blob([bytes]))).toEqual(expected);
    expect(await checksums(new Blob([makePng()]))).toEqual({
      parts: [await crc(makePng())],
      whole: await crc(makePng()),
    });
  });
});

describe("the multipart reader", () => {
  test("reads fields and a file whatever the chunks, with the file's checksums", async () => {
    const png = makePng(9, 9, 6 * 1024 * 1024); // two upload parts
    const form = new FormData();
    form.append("csrf_token", "token");
    form.append("item_0_text", "héllo\r\n--not a boundary");
    form.append("item_0_file", new File([png], "big.png", { type: "image/png" }));
    form.append("item_1_file", new File([], ""));
    form.append("op", "upload");
    const encoded = new Request("http://x/", { method: "POST", body: form });
    const type = encoded.headers.get("content-type")!;
    const bytes = new Uint8Array(await encoded.arrayBuffer());
    let offset = 0;
    let size = 1;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (offset >= bytes.length) return controller.close();
        size = size >= 70_000 ? 1 : size * 3 + 1; // 1, 4, 13, … bytes: boundaries split anywhere
        controller.enqueue(bytes.slice(offset, offset + size));
        offset += size;
      },
    });
    const request = new Request("http://x/", { method: "POST", headers: { "content-type": type }, body });
    const read = await readMultipartForm(request, { maxFileBytes: 8 * 1024 * 1024, allowFiles: () => true });
    try {
      expect([...read!.fields]).toEqual([
        ["csrf_token", "token"],
        ["item_0_text", "héllo\r\n--not a boundary"],
        ["op", "upload"],
      ]);
      expect(read!.files.length).toBe(1);
      const file = read!.files[0]!;
      expect({ field: file.field, name: file.fileName, type: file.contentType, size: file.byteSize }).toEqual(
        {
          field: "item_0_file",
          name: "big.png",
          type: "image/png",
          size: png.length,
        },
      );
      expect(Buffer.from(await Bun.file(file.path).arrayBuffer()).equals(png)).toBe(true);
      const crc = async (b: Uint8Array) => {
        const c = await createCrc64Nvme();
        c.update(b);
        return crc64nvmeToBase64(c.digest());
      };
      const part = 5 * 1024 * 1024;
      expect(file.partChecksums).toEqual([await crc(png.subarray(0, part)), await crc(png.subarray(part))]);
      expect(file.checksum).toBe(await crc(png));
    } finally {
      await read!.cleanup();
    }
  });

  test("a NUL character in a field's value or name, or in a file name, refuses the form", async () => {
    const forms: [string, (form: FormData) => void][] = [
      ["value", (form) => form.append("item_0_text", "hi\u0000there")],
      ["name", (form) => form.append("item\u0000text", "hi")],
      ["file name", (form) => form.append("item_0_file", new File([makePng(2, 2)], "a\u0000.png"))],
    ];
    for (const [what, fill] of forms) {
      const form = new FormData();
      form.append("csrf_token", "token");
      fill(form);
      const request = new Request("http://x/", { method: "POST", body: form });
      const read = readMultipartForm(request, { maxFileBytes: 1024 * 1024, allowFiles: () => true });
      expect({
        what,
        refused: await read.then(
          () => false,
          (e) => e instanceof FormRefused,
        ),
      }).toEqual({
        what,
        refused: true,
      });
    }
  });
});

describe("the compose pane: counters and problems by the validate endpoint's rules", () => {
  /** Posts the form to the pane's fragment route as the script does (urlencoded, with the form's token). */
  async function pane(browser: TestBrowser, from: string, fields: [string, string][]) {
    const body = new URLSearchParams(hiddenFields(from, page));
    for (const [name] of fields) body.delete(name);
    for (const [name, value] of fields) body.append(name, value);
    return browser.send("POST", `${page}/preview`, [...body] as [string, string][]);
  }

  test("the page shows each item's counter per chosen destination, and the fragment follows the typing", async () => {
    const opened = await owner.get(page);
    const first = screenOf(opened.text);
    expect(first.getByRole("region", { name: "Preview and checks" })).toBeDefined();
    const r = await pane(owner, opened.text, [
      ["destination_ids", alice],
      ["destination_ids", xDestination],
      ["item_count", "2"],
      ["item_0_text", "héllo 👋🏽"],
      ["item_1_text", `${"x".repeat(290)} https://example.com`],
      ["when", "now"],
    ]);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toStartWith("text/html");
    const screen = screenOf(`<main>${r.text}</main>`);
    const x = screen.within(screen.getByRole("region", { name: "Herald on X X" }));
    expect(x.namesOf("listitem")).toEqual(
      expect.arrayContaining([
        "Item 1: 8 of 280 characters",
        expect.stringMatching(/^Item 2: 314 of 280 characters \(over the limit\)$/),
        "Item 2: X bodies cannot contain URLs",
      ]),
    );
    const bsky = screen.within(screen.getByRole("region", { name: "alice.test Bluesky" }));
    expect(bsky.namesOf("listitem")).toEqual(
      expect.arrayContaining([
        "Item 1: 7 of 300 characters",
        "Item 2: 310 of 300 characters (over the limit)",
      ]),
    );
    expect(textOfStatus(screen)).toBe("2 problems to fix before sending.");
    // Each destination's preview, as its network draws the thread (the previews renderer).
    const xPreview = x.within(x.getByRole("region", { name: "X preview" }));
    expect(xPreview.namesOf("article")).toEqual(["X post 1 of 2", "X post 2 of 2"]);
    expect(textOf(xPreview.getAllByRole("article")[0]!)).toContain("héllo 👋🏽");
    expect(bsky.getByRole("region", { name: "Bluesky preview" })).toBeDefined();
  });

  test("a draft's problems are what publishing would refuse; nothing chosen asks for a destination", async () => {
    const opened = await owner.get(page);
    const draft = await pane(owner, opened.text, [
      ["destination_ids", alice],
      ["item_0_text", "b".repeat(301)],
      ["when", "draft"],
    ]);
    const screen = screenOf(`<main>${draft.text}</main>`);
    expect(textOfStatus(screen)).toBe("Saved as a draft it is fine; 1 problem to fix before publishing.");
    const none = await pane(owner, opened.text, [
      ["item_0_text", "hello"],
      ["when", "draft"],
    ]);
    expect(textOfStatus(screenOf(`<main>${none.text}</main>`))).toBe(
      "Choose a destination to see the post as it will look.",
    );
  });

  test("without this browser's token the fragment route refuses, and stores nothing", async () => {
    const r = await owner.send("POST", `${page}/preview`, {
      destination_ids: alice,
      item_0_text: "hi",
      csrf_token: "forged",
    });
    expect(r.status).toBe(403);
  });

  test("without the script: every network's options are on the page, shown only for the chosen ones", async () => {
    const opened = await owner.get(page);
    const chosen = await postForm(owner, opened.text, { op: "refresh", item_0_text: "x" }, [
      ["destination_ids", alice],
    ]);
    expect(noticesOf(chosen)).toContain("The options of the chosen destinations are shown.");
    const screen = screenOf(chosen.text);
    expect(screen.getByRole("group", { name: "Bluesky" })).toBeDefined();
    expect(screen.queryByRole("group", { name: "X" })).toBeNull();
    // The counters are there without the script too.
    expect(chosen.text).toContain("Bluesky 1/300");
    expect(screen.getByRole("button", { name: "Show options for the chosen destinations" })).toBeDefined();
  });

  test("the next queue slot names its day, time and zone", async () => {
    expect((await v1("PUT", "/queue", { windows: daily("09:00") })).status).toBe(200);
    const opened = await owner.get(page);
    const screen = screenOf(opened.text);
    const queue = screen.getByRole("radio", { name: "Add to the queue" });
    expect(queue).toBeDefined();
    expect(opened.text).toMatch(/Next queue slot: \w{3} \d{1,2} \w{3} 09:00 Europe\/Berlin/);
  });
});

function textOfStatus(screen: Screen): string {
  return textOf(screen.getByRole("status")).trim();
}

describe("the thumbnails of attached images", () => {
  test("an image of the workspace is served to the signed-in person; others are 404, strangers sign in", async () => {
    const png = makePng(8, 5);
    const id = await insertAsset(world.s, ws, { label: "thumb.png", bytes: png });
    const path = `/dashboard/workspaces/${ws}/assets/${id}/thumbnail`;
    const r = await owner.get(path);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("image/png");
    expect(r.headers.get("x-content-type-options")).toBe("nosniff");
    expect(r.headers.get("cache-control")).toBe("private, max-age=300");
    expect(r.text.length).toBeGreaterThan(0);
    const video = await insertAsset(world.s, ws, { label: "clip.mp4", contentType: "video/mp4" });
    expect((await owner.get(`/dashboard/workspaces/${ws}/assets/${video}/thumbnail`)).status).toBe(404);
    expect((await owner.get(`/dashboard/workspaces/${ws}/assets/ast_nope/thumbnail`)).status).toBe(404);
    const stranger = new TestBrowser(world.s);
    const signedOut = await stranger.get(path);
    expect(signedOut.status).toBe(303);
    expect(signedOut.location).toStartWith("/login");
  });
});

describe("media without the script", () => {
  test("Move earlier reorders an item's media and says so; detach and add say what they did", async () => {
    const first = await insertAsset(world.s, ws, { label: "first.png" });
    const second = await insertAsset(world.s, ws, { label: "second.png" });
    const opened = await owner.get(page);
    const attached = await postForm(owner, opened.text, { item_0_text: "two images", op: "attach" }, [
      ["item_0_media", first],
      ["item_0_add", second],
    ]);
    expect(noticesOf(attached)).toContain("second.png is attached to item 1.");
    const order = (text: string) => hiddenFieldsAll(text, "item_0_media");
    expect(order(attached.text)).toEqual([first, second]);
    const screen = screenOf(attached.text);
    // Only the second can move earlier; each image has its thumbnail and its alt text field.
    expect(screen.namesOf("button", { name: /^Move earlier/ })).toEqual([
      "Move earlier second.png (image/png, 4x3)",
    ]);
    expect(screen.getByLabelText("Alt text for first.png (image/png, 4x3)")).toBeDefined();
    // The form as a browser sends it: every attached id, in the page's order.
    const media = (text: string): [Record<string, string>, [string, string][]] => {
      const [head, ...rest] = order(text);
      return [{ item_0_media: head! }, rest.map((id): [string, string] => ["item_0_media", id])];
    };
    const [one, more] = media(attached.text);
    const moved = await postForm(
      owner,
      attached.text,
      { ...one, item_0_text: "two images", op: `move:0:${second}` },
      more,
    );
    expect(moved.status).toBe(200);
    expect(noticesOf(moved)).toContain("second.png is now media 1 of item 1.");
    expect(order(moved.text)).toEqual([second, first]);
    const [one2, more2] = media(moved.text);
    const detached = await postForm(
      owner,
      moved.text,
      { ...one2, item_0_text: "two images", op: `detach:0:${first}` },
      more2,
    );
    expect(noticesOf(detached)).toContain("first.png is detached from item 1.");
    expect(order(detached.text)).toEqual([second]);
    const added = await postForm(owner, detached.text, { item_0_text: "two images", op: "add" });
    expect(noticesOf(added)).toContain("Item 2 is added.");
  });
});

/** Every value of a hidden field of the page, in order. */
function hiddenFieldsAll(text: string, name: string): string[] {
  return [...text.matchAll(new RegExp(`<input type="hidden" name="${name}" value="([^"]+)"`, "g"))].map(
    (m) => m[1]!,
  );
}
