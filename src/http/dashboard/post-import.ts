// `/dashboard/workspaces/:workspace_id/posts/import`: a CSV of posts, uploaded or pasted, checked row by
// row (the API's dry run), then stored all at once with one button. Works without JavaScript.
import { readFile } from "node:fs/promises";
import { roleAllows } from "../../modules/account/roles.ts";
import { IMPORT_COLUMNS } from "../../modules/post-imports/csv.ts";
import { html, type Markup } from "../pages/html.ts";
import { readForm } from "../pages/respond.ts";
import type { ApiAnswer } from "./api.ts";
import type { PostImport } from "./api-resources.ts";
import { readMultipartForm, type ReceivedForm } from "./multipart.ts";
import { actOnReceivedForm } from "./received-form.ts";
import { postPath } from "./post-view.ts";
import type { DashboardRequest, DashboardRoutes } from "./router.ts";
import { badge, postForm, table, textarea } from "./ui.ts";

/** The most a CSV file may weigh here: the API's body limit. */
const MAX_CSV_BYTES = 1024 * 1024;

const SAMPLE = `group,when,time_zone,destination_id,body,media
launch,2026-12-01T09:00,Europe/Berlin,dest_…,"Herald 2.0 is out.
---
Here is what changed.",ast_…`;

/** The import page and its form (register with the posts area). */
export function postImportPages(routes: DashboardRoutes): void {
  const path = "/dashboard/workspaces/:workspace_id/posts/import";
  routes
    .page(path, (r) => (mayImport(r) ? show(r, { csv: "" }) : cannotImport(r)))
    .multipart(path, async (r) => {
      if (!mayImport(r)) return cannotImport(r);
      return actOnReceivedForm(
        r,
        readImportForm,
        [
          "An import takes at most 1 MiB. Split the CSV into several files of fewer rows and import each one.",
        ],
        act,
      );
    });
}

const mayImport = (r: DashboardRequest) => roleAllows(r.session.role, "posts:write");

const cannotImport = (r: DashboardRequest) =>
  r.message(403, "You cannot import posts", ["Your role in this account does not include writing posts."]);

/** Both forms are multipart (a file, or the checked CSV as text); an urlencoded one is read too. */
async function readImportForm(r: DashboardRequest): Promise<ReceivedForm | null> {
  const type = r.request.headers.get("content-type") ?? "";
  if (/^multipart\/form-data/i.test(type))
    return readMultipartForm(r.request, {
      maxFileBytes: MAX_CSV_BYTES,
      allowFiles: (fields) => r.csrfValid(fields.get("csrf_token")),
    });
  const fields = await readForm(r.request);
  return { fields, files: [], cleanup: async () => {} };
}

/** What the page shows besides the form. */
interface Outcome {
  csv: string;
  /** The rows as the API judged (or stored) them. */
  result?: PostImport;
  /** The import was stored (201/202); `approval`: its posts wait for approval. */
  stored?: { approval: boolean };
  /** A refusal of the file as a whole: its detail and where (row and column) each problem is. */
  refusal?: { detail: string; problems: string[] };
  status?: number;
}

/** Check (the dry run) or import (all rows or none), as the button said. */
async function act(r: DashboardRequest, form: ReceivedForm): Promise<Response> {
  const file = form.files.find((f) => f.field === "file" && f.byteSize > 0);
  const csv = file ? await readFile(file.path, "utf8") : (form.fields.get("csv") ?? "");
  if (csv.trim() === "")
    return show(r, {
      csv,
      refusal: { detail: "Choose a CSV file or paste its text.", problems: [] },
      status: 400,
    });
  const path = `/workspaces/${r.workspace!.id}/post-imports`;
  if (form.fields.get("op") !== "import") {
    const answer = await r.api.call<PostImport>("POST", path, { body: { csv, dry_run: true } });
    return answer.ok ? show(r, { csv, result: answer.body }) : refused(r, csv, answer);
  }
  const key = form.fields.get("idempotency_key") || undefined;
  const answer = await r.api.call<PostImport>("POST", path, {
    body: { csv, confirmed: true },
    idempotencyKey: key,
  });
  if (answer.ok)
    return show(r, { csv: "", result: answer.body, stored: { approval: answer.status === 202 } });
  return refused(r, csv, answer);
}

/** Where an API pointer is in the file, for people: `/rows/3/when` → "Row 3, column when". */
function placeOf(pointer: string): string {
  const [, row, column] = /^\/rows\/(\d+)(?:\/(.+))?$/.exec(pointer) ?? [];
  if (row)
    return column ? `Row ${row}, column ${column.replace(/~1/g, "/").replace(/~0/g, "~")}` : `Row ${row}`;
  return pointer === "/confirmed" ? "Confirmation" : "The file";
}

/** A refused request: the rows of a refused import (422), or the file's problems (400, 413, …). */
function refused(r: DashboardRequest, csv: string, answer: ApiAnswer<PostImport>): Response {
  if (answer.ok) return show(r, { csv, result: answer.body });
  if (answer.status === 403)
    return r.message(403, "Not allowed", ["Your role in this account does not allow this."]);
  const problem = answer.body as (typeof answer.body & { rows?: PostImport["rows"] }) | null;
  if (answer.status === 422 && problem?.rows)
    return show(r, {
      csv,
      result: { object: "post_import", id: "", dry_run: false, rows: problem.rows },
      status: 422,
    });
  const problems = (problem?.errors ?? []).map((e) => `${placeOf(e.pointer)}: ${e.detail}`);
  return show(r, {
    csv,
    refusal: { detail: problem?.detail ?? "The file could not be imported.", problems },
    status: answer.status,
  });
}

function show(r: DashboardRequest, outcome: Outcome): Response {
  const ws = r.workspace!;
  const action = `/dashboard/workspaces/${ws.id}/posts/import`;
  const content = html`<h1>Import posts from CSV</h1>
<p>Each row of the file is one post; rows with the same <code>group</code> are one post group. Row 1 names
the columns: ${IMPORT_COLUMNS.map((c, i) => html`${i ? ", " : ""}<code>${c}</code>`)}. In
<code>body</code>, a line of three dashes (<code>---</code>) starts the next item of a thread. Checking
stores nothing; importing stores every row, or none when one has a problem.</p>
${outcomeBlock(r, outcome, action)}
<h2>${outcome.result && !outcome.stored ? "Check another file" : "Choose or paste a file"}</h2>
${postForm(
  { action, csrf: r.csrf, multipart: true, label: "CSV to check" },
  html`<div class="field">
<label for="f-file">CSV file</label>
<p class="hint" id="f-file-hint">A .csv file of at most 1 MiB, as a spreadsheet saves it.</p>
<input id="f-file" type="file" name="file" accept=".csv,text/csv" aria-describedby="f-file-hint">
</div>
${textarea({
  name: "csv",
  pointer: "/csv",
  label: "Or paste the CSV",
  hint: "Used when no file is chosen.",
  value: outcome.result && !outcome.stored ? outcome.csv : outcome.refusal ? outcome.csv : "",
  rows: 8,
})}
<details><summary>A sample file</summary><pre>${SAMPLE}</pre></details>
<button type="submit" name="op" value="check">Check the rows</button>`,
)}`;
  return r.render("Import posts", content, { section: "posts", status: outcome.status ?? 200 });
}

/** The result of the last step: a notice, the table of rows and, when all are valid, the import button. */
function outcomeBlock(r: DashboardRequest, outcome: Outcome, action: string): Markup {
  if (outcome.refusal)
    return html`<div class="errors" role="alert" aria-labelledby="errors-title">
<h2 id="errors-title">The file cannot be imported</h2>
<p>${outcome.refusal.detail}</p>
${outcome.refusal.problems.length ? html`<ul>${outcome.refusal.problems.map((p) => html`<li>${p}</li>`)}</ul>` : ""}
</div>`;
  const result = outcome.result;
  if (!result) return html``;
  const rows = result.rows;
  const bad = rows.filter((row) => !row.valid).length;
  const ws = r.workspace!.id;
  const cells = rows.map((row) => [
    String(row.row),
    row.valid ? badge("Valid", "ok") : badge("Not valid", "danger"),
    row.errors.length
      ? html`<ul>${row.errors.map(
          (e) => html`<li><strong>${e.column ?? "Row"}</strong>: ${e.detail}</li>`,
        )}</ul>`
      : null,
    row.post_ids.length
      ? html`${row.post_ids.map((id) => html`<a href="${postPath(ws, id)}">${id}</a>`)}`
      : null,
  ]);
  const rowsTable = table({
    caption: "Rows of the file (numbered as a spreadsheet shows them; row 1 is the header)",
    head: ["Row", "Valid", "Problems", "Post"],
    rows: cells,
    empty: "The file has no rows.",
  });
  if (outcome.stored) {
    const waiting = outcome.stored.approval
      ? " They are drafts awaiting approval by someone who may approve posts."
      : "";
    const made = `${rows.length} post${rows.length === 1 ? "" : "s"}`;
    return html`<div class="notice ok" role="status"><p>Imported ${made}: each row's post is linked below.${waiting}</p></div>
${rowsTable}
<p><a href="/dashboard/workspaces/${ws}/posts">See all posts</a></p>`;
  }
  if (bad > 0)
    return html`<div class="errors" role="alert" aria-labelledby="errors-title">
<h2 id="errors-title">${bad} of ${rows.length} row${rows.length === 1 ? " has" : "s have"} problems</h2>
<p>Nothing was stored. Correct the rows named below in the file, then check it again.</p>
</div>
${rowsTable}`;
  const count = `${rows.length} post${rows.length === 1 ? "" : "s"}`;
  const all = `All ${rows.length} row${rows.length === 1 ? " is" : "s are"} valid.`;
  return html`<div class="notice ok" role="status"><p>${all} Nothing is stored until you import them.</p></div>
${rowsTable}
${postForm(
  // Multipart: a form's text fields may hold 1 MiB there (urlencoded forms are held to 16 KiB).
  { action, csrf: r.csrf, multipart: true, label: "Import the checked rows", confirm: `Import ${count}?` },
  html`<input type="hidden" name="csv" value="${outcome.csv}">
<button type="submit" name="op" value="import">Import ${count}</button>`,
)}`;
}
