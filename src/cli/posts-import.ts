// `herald posts import FILE`: a CSV of posts judged row by row (a dry run first, always), printed as a
// table, then stored all at once after a confirmation, under an Idempotency-Key derived from the file
// so that running the same import again replays its answer instead of importing twice.
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { request, resolveWorkspace } from "./api.ts";
import { flag, parseCommand, str } from "./args.ts";
import { connect } from "./credentials.ts";
import { ApiError, UsageError } from "./errors.ts";
import { type CommandOutput, json, table } from "./format.ts";
import { IMPORT_HELP } from "./posts-help.ts";
import { confirm, interactive } from "./prompt.ts";

interface ImportRow {
  row: number;
  valid: boolean;
  errors: { column: string | null; code: string; detail: string }[];
  post_ids: string[];
}

/** The rows as a table: row, valid, each error as "column: detail", the posts made. */
export function importTable(rows: ImportRow[]): string {
  return table(
    ["row", "valid", "errors", "post ids"],
    rows.map((r) => [
      r.row,
      r.valid,
      r.errors.map((e) => `${e.column ?? "row"}: ${e.detail}`).join("; "),
      r.post_ids.join(" "),
    ]),
    "No rows.",
  );
}

/**
 * The import's Idempotency-Key: the workspace and the file's bytes, hashed. Re-running the same file
 * (a retry after a lost answer, a second run by mistake) replays the first answer; an edited file is
 * a new import.
 */
export function importKey(workspace: string, csv: string): string {
  return `csv-import-${createHash("sha256").update(`${workspace}\n${csv}`).digest("hex").slice(0, 48)}`;
}

async function readCsv(file: string): Promise<string> {
  if (file === "-") return await Bun.stdin.text();
  return await readFile(file, "utf8").catch(() => {
    throw new UsageError(`${file} is not a readable file`);
  });
}

/** The summary under the table of a refused or invalid file. */
function notStored(rows: ImportRow[]): string {
  return `${rows.filter((r) => !r.valid).length} of ${rows.length} row(s) not valid; nothing was stored`;
}

/** `herald posts import FILE`: exit 0 when every row is valid (and, without --dry-run, stored), else 1. */
export async function importPosts(args: string[]): Promise<CommandOutput> {
  const p = parseCommand(
    args,
    { "dry-run": { type: "boolean" }, yes: { type: "boolean", short: "y" }, workspace: { type: "string" } },
    [1, 1],
    "herald posts import --help",
  );
  if (flag(p, "help")) return IMPORT_HELP;
  const file = p.positionals[0]!;
  const csv = await readCsv(file);
  const config = await connect("posts:write");
  const workspace = await resolveWorkspace(config, str(p, "workspace"));
  const path = `/workspaces/${workspace}/post-imports`;
  const yes = flag(p, "yes");
  if (!flag(p, "dry-run") && !yes && !interactive())
    throw new UsageError("importing stores posts and needs confirmation; pass --yes (no terminal to ask)");
  // --yes stores at once (a retried run replays under the same key); otherwise the rows are judged
  // and shown first, and stored only once the person says so.
  if (!yes) {
    const judged = (await request(config, "POST", path, { csv, dry_run: true })).body;
    const rows: ImportRow[] = judged.rows;
    const valid = rows.every((r) => r.valid);
    if (flag(p, "dry-run") || !valid) {
      if (flag(p, "json")) return { stdout: json(judged), exitCode: valid ? 0 : 1 };
      const summary = valid
        ? `dry run: all ${rows.length} row(s) valid; nothing was stored`
        : notStored(rows);
      return { stdout: `${importTable(rows)}\n${summary}`, exitCode: valid ? 0 : 1 };
    }
    process.stderr.write(`${importTable(rows)}\n`);
    await confirm(`Import ${rows.length} post(s) from ${file === "-" ? "standard input" : file}?`, false);
  }
  let answer: Awaited<ReturnType<typeof request>>;
  try {
    answer = await request(
      config,
      "POST",
      path,
      { csv, confirmed: true },
      { idempotencyKey: importKey(workspace, csv) },
    );
  } catch (error) {
    // All or none: a refused import names its rows; show them as the dry run would.
    const problem = error instanceof ApiError && error.status === 422 ? error.problem : null;
    const rows = (problem as { rows?: ImportRow[] } | null)?.rows;
    if (!rows) throw error;
    if (flag(p, "json")) return { stdout: json(problem), exitCode: 1 };
    return { stdout: `${importTable(rows)}\n${notStored(rows)}`, exitCode: 1 };
  }
  if (flag(p, "json")) return json(answer.body);
  const lines = [importTable(answer.body.rows)];
  const replayed = answer.headers.get("idempotent-replayed") === "true";
  lines.push(
    replayed
      ? `this file was already imported (${answer.body.id}); the posts above are the ones it made`
      : `imported ${answer.body.rows.length} post(s) (${answer.body.id})`,
  );
  if (answer.status === 202)
    lines.push("The workspace requires approval: the posts are drafts awaiting a holder of posts:approve.");
  return lines.join("\n");
}
