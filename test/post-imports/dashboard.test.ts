// The dashboard's import page: upload or paste a CSV, see each row judged in a table, import with one
// button, and see what was made; all of it without JavaScript, through the API's own rules.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { hiddenFields, type PageResponse, type TestBrowser } from "../helpers/browser.ts";
import { screenOf } from "../helpers/screen.ts";
import { pathIn, postsWorld, type PostsWorld } from "../dashboard/posts-world.ts";

let w: PostsWorld;
let browser: TestBrowser;
let page: string;
beforeAll(async () => {
  w = await postsWorld();
  browser = await w.signedIn();
  page = pathIn(w.ws, "posts/import");
});
afterAll(() => w.stop());

const LATER = "2026-03-05T09:00:00+01:00";

/** Sends the page's check form as a browser does (multipart), with a file or pasted text. */
async function check(input: { file?: string; pasted?: string }): Promise<PageResponse> {
  const opened = await browser.get(page);
  const form = new FormData();
  for (const [name, value] of Object.entries(hiddenFields(opened.text, page))) form.append(name, value);
  form.append("csv", input.pasted ?? "");
  form.append(
    "file",
    new File([input.file ?? ""], input.file === undefined ? "" : "posts.csv", { type: "text/csv" }),
  );
  form.append("op", "check");
  return browser.send("POST", page, form);
}

/** Presses "Import N posts" on a checked page: its form sent as a browser does (multipart). */
function confirmImport(checkedPage: string): Promise<PageResponse> {
  const screen = screenOf(checkedPage);
  const form = screen.getByRole("form", { name: "Import the checked rows" });
  expect(form.attribs.enctype).toBe("multipart/form-data");
  const data = new FormData();
  for (const input of screen.within(form).elements("input"))
    data.append(input.attribs.name!, input.attribs.value ?? "");
  data.append("op", "import");
  return browser.send("POST", form.attribs.action!, data);
}

const postsOfGroup = async (group: string) =>
  (await w.call("GET", `/v1/workspaces/${w.ws}/posts?group=${group}`)).body.data;

describe("the import page", () => {
  test("the posts page links to it; it has a file field, a paste field and a check button", async () => {
    const posts = screenOf((await browser.get(pathIn(w.ws, "posts"))).text);
    expect(posts.getByRole("link", { name: "Import from CSV" }).attribs.href).toBe(page);
    const r = await browser.get(page);
    expect(r.status).toBe(200);
    const screen = screenOf(r.text);
    screen.getByRole("heading", { name: "Import posts from CSV" });
    expect(screen.getByLabelText("CSV file").attribs.type).toBe("file");
    expect(screen.getByLabelText("Or paste the CSV").name).toBe("textarea");
    screen.getByRole("button", { name: "Check the rows" });
  });

  test("an uploaded file with a bad row: the table names the row and its column; nothing stored", async () => {
    const file =
      `group,when,destination_id,body\ndash-a,${LATER},${w.destinationId},Fine\n` +
      `dash-b,tomorrow,${w.destinationId},Bad\n`;
    const r = await check({ file });
    expect(r.status).toBe(200);
    const screen = screenOf(r.text);
    screen.getByRole("alert");
    expect(screen.text()).toContain("1 of 2 rows have problems");
    const table = screen.getByRole("table", { name: /Rows of the file/ });
    const records = screen.recordsOf(table);
    expect(records.map((row) => [row.Row, row.Valid])).toEqual([
      ["2", "Valid"],
      ["3", "Not valid"],
    ]);
    expect(records[1]!.Problems).toStartWith("when: ");
    expect(screen.queryByRole("button", { name: /^Import/ })).toBeNull();
    expect(await postsOfGroup("dash-a")).toEqual([]);
  });

  test("pasted valid rows: a notice, the table, then one button imports them all", async () => {
    const pasted =
      `group,when,channel,destination_id,body\ndash-ok,${LATER},,${w.destinationId},"Hello,\n---\nthread"\n` +
      "dash-note,draft,bluesky,,Later\n";
    const checked = await check({ pasted });
    const screen = screenOf(checked.text);
    screen.getByRole("status");
    expect(screen.text()).toContain("All 2 rows are valid. Nothing is stored until you import them.");
    expect(await postsOfGroup("dash-ok")).toEqual([]);
    screen.getByRole("button", { name: "Import 2 posts" });
    const imported = await confirmImport(checked.text);
    expect(imported.status).toBe(200);
    const done = screenOf(imported.text);
    done.getByRole("status");
    expect(done.text()).toContain("Imported 2 posts");
    const [scheduled] = await postsOfGroup("dash-ok");
    const [draft] = await postsOfGroup("dash-note");
    expect(scheduled.payload.body).toEqual(["Hello,", "thread"]);
    expect(draft.state).toBe("draft");
    const links = done.getAllByRole("link", { name: /^send_/ }).map((a) => a.attribs.href);
    expect(links).toEqual([pathIn(w.ws, `posts/${scheduled.id}`), pathIn(w.ws, `posts/${draft.id}`)]);
    // The same form sent again (a reload) replays the import instead of storing it twice.
    const again = await confirmImport(checked.text);
    expect(screenOf(again.text).text()).toContain("Imported 2 posts");
    expect(await postsOfGroup("dash-ok")).toHaveLength(1);
  });

  test("a file bigger than an urlencoded form (16 KiB) is imported whole", async () => {
    const lines = Array.from(
      { length: 300 },
      (_, i) => `bulk-${i},draft,bluesky,Idea ${i}: ${"x".repeat(60)}`,
    );
    const checked = await check({ file: `group,when,channel,body\n${lines.join("\n")}\n` });
    expect(checked.text.length).toBeGreaterThan(16 * 1024);
    expect(screenOf(checked.text).text()).toContain("All 300 rows are valid.");
    const imported = await confirmImport(checked.text);
    expect(imported.status).toBe(200);
    expect(screenOf(imported.text).text()).toContain("Imported 300 posts");
    expect(await postsOfGroup("bulk-299")).toHaveLength(1);
  });

  test("a file with an unknown column: the problem names row 1 and the column", async () => {
    const r = await check({ file: `when,destination_id,body,colour\n${LATER},${w.destinationId},x,red\n` });
    expect(r.status).toBe(400);
    const alert = screenOf(r.text).getByRole("alert");
    expect(screenOf(r.text).within(alert).text()).toContain(
      "Row 1, column colour: is not a column of an import",
    );
  });

  test("nothing chosen nor pasted asks for a file", async () => {
    const r = await check({});
    expect(r.status).toBe(400);
    expect(screenOf(r.text).text()).toContain("Choose a CSV file or paste its text.");
  });
});
