// The CSV import: every row judged by Create Post's own checks (its schema, handed in by the route,
// and `planCreatePosts`), then all rows stored in one transaction or none.
import { auditActorOf, type Actor } from "../../core/actor.ts";
import { ProblemError, type FieldError, type ProblemCode } from "../../core/problem.ts";
import { newId } from "../../db/ids.ts";
import type { Db } from "../../db/open.ts";
import type { Herald } from "../../herald.ts";
import { needsApproval } from "../approvals/request.ts";
import { recordAudit } from "../audit/repo.ts";
import { findDestination } from "../destinations/repo.ts";
import { inPostsTransaction } from "../posts/constraints.ts";
import {
  planCreatePosts,
  storePlannedPosts,
  type CreatePostsInput,
  type PostItemInput,
} from "../posts/create.ts";
import type { WorkspaceRow } from "../workspaces/repo.ts";
import { readImportSheet, type CsvRow, type ImportColumn } from "./csv.ts";

/** The body of `POST {ws}/post-imports`. */
export interface PostImportInput {
  csv: string;
  dry_run?: boolean;
  confirmed?: boolean;
}

/** One problem of a row: its column (null: the row as a whole), Create Post's problem code, and what. */
export interface RowError {
  column: ImportColumn | null;
  code: string;
  detail: string;
}

/** One judged row of the answer. */
export interface ImportedRow {
  row: number;
  valid: boolean;
  errors: RowError[];
  post_ids: string[];
}

/** The `post_import` answer. */
export interface PostImport {
  object: "post_import";
  id: string;
  dry_run: boolean;
  rows: ImportedRow[];
}

/** Create Post's request schema as the route checks it: its field errors for one request body. */
export type CreateRequestCheck = (input: CreatePostsInput) => FieldError[];

/** A body cell's thread items: a line holding only `---` separates them; CRLF inside a cell is a newline. */
export function threadItems(cell: string): string[] {
  return cell
    .replace(/\r\n?/g, "\n")
    .split(/^[ \t]*---[ \t]*$/m)
    .map((item) => item.trim());
}

const trimmed = (value: string | undefined): string | undefined => {
  const v = value?.trim();
  return v ? v : undefined;
};

/** The rows of one group, in file order, and the Create Post request they make. */
interface GroupRequest {
  rows: CsvRow[];
  input: CreatePostsInput;
}

/**
 * Groups the rows by their `group` cell (a row without one is a group of its own, named after the
 * import and the row) and builds each group's Create Post request; the group's `when` and `time_zone`
 * are its first row's, and a later row that says otherwise gets an error on that column.
 */
async function groupRequests(
  db: Db,
  workspaceId: string,
  importId: string,
  rows: CsvRow[],
  errorsOf: (row: number) => RowError[],
): Promise<GroupRequest[]> {
  const groups = new Map<string, CsvRow[]>();
  for (const row of rows) {
    const name = trimmed(row.cells.group) ?? `${importId}-row-${row.row}`;
    groups.set(name, [...(groups.get(name) ?? []), row]);
  }
  const requests: GroupRequest[] = [];
  for (const [group, members] of groups) {
    const first = members[0]!;
    for (const column of ["when", "time_zone"] as const)
      for (const other of members.slice(1))
        if ((trimmed(other.cells[column]) ?? "") !== (trimmed(first.cells[column]) ?? ""))
          errorsOf(other.row).push({
            column,
            code: "public_invalid_request",
            detail: `differs from row ${first.row}, the first of group ${group}: a group's posts share one ${column}`,
          });
    const posts: PostItemInput[] = [];
    for (const row of members) posts.push(await itemOf(db, workspaceId, row));
    const when = trimmed(first.cells.when);
    const timeZone = trimmed(first.cells.time_zone);
    const input = {
      ...(when === undefined ? {} : { when }),
      ...(timeZone === undefined ? {} : { time_zone: timeZone }),
      confirmed: true,
      group,
      posts,
    } as CreatePostsInput;
    requests.push({ rows: members, input });
  }
  return requests;
}

/** A row's item of `posts`; `first_comment` goes to `destination_options.<channel>.first_comment`. */
async function itemOf(db: Db, workspaceId: string, row: CsvRow): Promise<PostItemInput> {
  const { cells } = row;
  const destinationId = trimmed(cells.destination_id);
  const channel = trimmed(cells.channel);
  const media = (cells.media ?? "").split(/\s+/).filter(Boolean);
  const item: PostItemInput = { body: threadItems(cells.body ?? "") };
  if (destinationId !== undefined) item.destination_id = destinationId;
  if (channel !== undefined) item.channel = channel;
  if (media.length > 0) item.media = media;
  const firstComment = cells.first_comment?.trim() ? cells.first_comment.replace(/\r\n?/g, "\n") : undefined;
  if (firstComment !== undefined) {
    // The option lives under the destination's network (a channel cell names it when there is none).
    const network =
      (destinationId ? (await findDestination(db, workspaceId, destinationId))?.channel : undefined) ??
      channel;
    if (network !== undefined) item.destination_options = { [network]: { first_comment: firstComment } };
  }
  return item;
}

// Where a Create Post pointer lands in the sheet: the item's field → the column that filled it.
const FIELD_COLUMNS: Record<string, ImportColumn> = {
  destination_id: "destination_id",
  channel: "channel",
  body: "body",
  media: "media",
  media_items: "media",
  destination_options: "first_comment",
};

/** The column of a whole item's or whole request's finding, by its problem code. */
function columnOfWhole(code: string): ImportColumn {
  if (code === "public_post_group_channel_conflict") return "group";
  if (code === "public_usage_limit_reached") return "channel";
  return "destination_id";
}

/**
 * Places one finding of a group's request on its rows: `/posts/<i>/…` on row i (with the thread item
 * or asset it names), request-wide pointers (`/when`, `/time_zone`, `/group`, `/posts`, the key's
 * environment) on every row of the group.
 */
function placeFinding(
  request: { rows: CsvRow[] },
  finding: { pointer: string; code: string; detail: string },
  errorsOf: (row: number) => RowError[],
): void {
  const { pointer, code, detail } = finding;
  const item = /^\/posts\/(\d+)(?:\/([^/]+)(?:\/(\d+))?)?/.exec(pointer);
  if (item) {
    const row = request.rows[Number(item[1])];
    if (!row) return;
    const field = item[2];
    const column = field === undefined ? columnOfWhole(code) : (FIELD_COLUMNS[field] ?? null);
    // Which thread item or asset, when the cell holds several.
    const index = item[3] === undefined ? null : Number(item[3]);
    const several = field === "body" ? threadItems(row.cells.body ?? "").length > 1 : field !== undefined;
    const where =
      index !== null && several ? `${field === "body" ? "thread item" : "asset"} ${index + 1}: ` : "";
    errorsOf(row.row).push({ column, code, detail: `${where}${detail}` });
    return;
  }
  const top = /^\/([^/]+)/.exec(pointer)?.[1];
  const column: ImportColumn =
    top === "when" || top === "time_zone" || top === "group"
      ? top
      : top === "posts"
        ? columnOfWhole(code)
        : "when"; // "": the key's environment (publishing needs a live key; drafts do not)
  for (const row of request.rows) errorsOf(row.row).push({ column, code, detail });
}

/** A dry run's transaction is rolled back with this once every row is judged. */
class DryRunDone extends Error {}

/**
 * Judges every row as Create Post would and, unless this is a dry run, stores all of them in one
 * transaction (with an audit record of the import), or none: 422 `public_unpublishable` whose errors
 * point at `/rows/<row>/<column>`, with `rows` beside them. Groups are planned and stored one after
 * another in the transaction, so a later group sees the queue slots and drafts of the earlier ones; a
 * dry run does the same and rolls back. `awaitingApproval`: posts were stored waiting for approval.
 */
export async function importPosts(args: {
  h: Herald;
  actor: Actor;
  workspace: WorkspaceRow;
  input: PostImportInput;
  checkRequest: CreateRequestCheck;
}): Promise<{ result: PostImport; awaitingApproval: boolean }> {
  const { h, actor, workspace, input, checkRequest } = args;
  const dryRun = input.dry_run === true;
  const sheet = readImportSheet(input.csv);
  if (!dryRun && input.confirmed !== true) {
    const publishing = sheet.rows.filter((r) => (trimmed(r.cells.when) ?? "draft") !== "draft");
    if (publishing.length > 0)
      throw new ProblemError(
        "public_invalid_request",
        `Rows that publish or schedule (${publishing.map((r) => r.row).join(", ")}) need confirmed: true.`,
        {
          errors: [{ pointer: "/confirmed", code: "custom", detail: "must be true to publish or schedule" }],
        },
      );
  }
  const id = newId("imp");
  const now = h.clock.now();
  // Set by the transaction's last run (PostgreSQL may run it again after a serialization failure).
  const judged: { rows: ImportedRow[]; awaitingApproval: boolean } = { rows: [], awaitingApproval: false };
  try {
    await inPostsTransaction(h.db, async (tx) => {
      Object.assign(
        judged,
        await judgeAndStore({ h, tx, actor, workspace, id, rows: sheet.rows, checkRequest, now }),
      );
      if (dryRun) throw new DryRunDone();
      if (!judged.rows.every((r) => r.valid)) throw refusal(judged.rows);
      const target = {
        action: "post_import.created",
        workspaceId: workspace.id,
        targetType: "post_import",
        targetId: id,
      };
      await recordAudit(tx, auditActorOf(actor), target, now);
    });
  } catch (error) {
    if (!(error instanceof DryRunDone)) throw error;
  }
  const { rows, awaitingApproval } = judged;
  const result: PostImport = {
    object: "post_import",
    id,
    dry_run: dryRun,
    rows: dryRun ? rows.map((r) => ({ ...r, post_ids: [] })) : rows,
  };
  return { result, awaitingApproval: !dryRun && awaitingApproval };
}

/** 422 naming each bad row's column, with every row beside the errors. */
function refusal(rows: ImportedRow[]): ProblemError {
  const bad = rows.filter((r) => !r.valid);
  const errors: FieldError[] = bad.flatMap((r) =>
    r.errors.map((e) => ({
      pointer: e.column === null ? `/rows/${r.row}` : `/rows/${r.row}/${e.column}`,
      code: e.code,
      detail: e.detail,
    })),
  );
  const list = bad.map((r) => r.row).join(", ");
  return new ProblemError(
    "public_unpublishable",
    `${bad.length} of ${rows.length} row(s) cannot be imported (row${bad.length === 1 ? "" : "s"} ${list}); nothing was stored.`,
    { errors, extensions: { rows: rows.map((r) => ({ ...r, post_ids: [] })) } },
  );
}

/** Every row judged, and each group that passes stored in the open transaction `tx`. */
async function judgeAndStore(args: {
  h: Herald;
  tx: Db;
  actor: Actor;
  workspace: WorkspaceRow;
  id: string;
  rows: CsvRow[];
  checkRequest: CreateRequestCheck;
  now: number;
}): Promise<{ rows: ImportedRow[]; awaitingApproval: boolean }> {
  const { h, tx, actor, workspace, checkRequest, now } = args;
  const errors = new Map<number, RowError[]>(args.rows.map((r) => [r.row, []]));
  const errorsOf = (row: number) => errors.get(row)!;
  const postIds = new Map<number, string[]>();
  for (const row of args.rows)
    if (row.extraCells > 0)
      errorsOf(row.row).push({
        column: null,
        code: "public_invalid_request",
        detail: `has ${row.extraCells} cell(s) beyond the header's columns; name the column in row 1 or leave them empty`,
      });
  let awaitingApproval = false;
  for (const request of await groupRequests(tx, workspace.id, args.id, args.rows, errorsOf)) {
    // The schema first, as the rails check it: items it refuses are left out of the plan (as Create
    // Post would never plan them), and a request-wide refusal leaves the whole group unplanned.
    const refused = checkRequest(request.input);
    for (const finding of refused)
      placeFinding(request, { ...finding, code: "public_invalid_request" }, errorsOf);
    if (refused.some((f) => !/^\/posts\/\d+\//.test(f.pointer))) continue;
    const badItems = new Set(refused.map((f) => Number(/^\/posts\/(\d+)/.exec(f.pointer)![1])));
    const kept = request.rows.flatMap((row, i) =>
      badItems.has(i) ? [] : [{ row, item: request.input.posts[i]! }],
    );
    if (kept.length === 0) continue;
    const planned = {
      rows: kept.map((k) => k.row),
      input: { ...request.input, posts: kept.map((k) => k.item) },
    };
    const forApproval = planned.input.when !== "draft" && needsApproval(workspace, actor);
    const plan = await planCreatePosts({
      h,
      db: tx,
      actor,
      workspace,
      input: planned.input,
      now,
      withWarnings: false,
      forApproval,
    });
    for (const [code, list] of plan.findings.byCode)
      for (const finding of list) placeFinding(planned, { ...finding, code }, errorsOf);
    if (plan.findings.byCode.size > 0) continue;
    try {
      const stored = await storePlannedPosts(tx, {
        h,
        actor,
        workspace,
        input: planned.input,
        rows: plan.rows,
        forApproval,
        now,
      });
      for (const [i, post] of stored.entries()) postIds.set(planned.rows[i]!.row, [post.id]);
      awaitingApproval ||= forApproval;
    } catch (error) {
      // Over the month's X limit: the refusal names the group's X rows.
      if (!(error instanceof ProblemError) || error.code !== "public_usage_limit_reached") throw error;
      for (const finding of error.errors)
        placeFinding(planned, { ...finding, code: error.code as ProblemCode }, errorsOf);
    }
  }
  const rows = args.rows.map((row) => {
    const list = errorsOf(row.row);
    return { row: row.row, valid: list.length === 0, errors: list, post_ids: postIds.get(row.row) ?? [] };
  });
  return { rows, awaitingApproval };
}
