// `herald export` and `herald import`: moving an installation between SQLite and PostgreSQL (and
// between machines). The work is in src/modules/transfer; this is arguments, help and output.
import { byteSize } from "./format.ts";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ConfigError, loadConfig, type Config } from "../config.ts";
import { engineOf } from "../db/engine.ts";
import type { Herald } from "../herald.ts";
import { createLogger } from "../lib/logger.ts";
import { exportInstallation, type ExportSummary } from "../modules/transfer/export.ts";
import { TransferError } from "../modules/transfer/format.ts";
import { importInstallation, type ImportSummary } from "../modules/transfer/import.ts";
import { openHerald } from "../server.ts";
import { UsageError } from "./admin.ts";

export const EXPORT_HELP = `Usage: herald export --out FILE [--json]

Writes the whole installation to FILE (a new file, mode 0600): every table of the database
(SQLite or PostgreSQL, read in one consistent snapshot, so the server may keep running) and, with
HERALD_STORAGE=local, every asset's bytes. With HERALD_STORAGE=s3 the bytes stay in the bucket.

The secret key is NOT in the file. Start the target with the same key: the same
HERALD_SECRET_KEY, or a copy of <HERALD_DATA_DIR>/secret.key. Without it the target cannot open
sealed credentials or webhook secrets, and import refuses the file.

  --out FILE   where to write (must not exist)
  --json       print a JSON summary

Then: herald import FILE, with HERALD_* set for the target. See docs/operations.md.`;

export const IMPORT_HELP = `Usage: herald import FILE [--allow-missing-blobs] [--json]

Loads an export (herald export) into the configured installation, which must be empty (a fresh
HERALD_DATA_DIR, or a fresh PostgreSQL database with HERALD_DATABASE_URL). The file is checked
whole first (a truncated or damaged file is refused before anything is written); the blobs go to
the target's store (HERALD_STORAGE: local disk or S3); then every row is inserted in one
transaction. The target must have the source's secret key (HERALD_SECRET_KEY or secret.key).

  --allow-missing-blobs   import even when ready assets have no bytes in the target's store
  --json                  print a JSON summary

Export and import with the same Herald version. See docs/operations.md.`;

type Values = Record<string, string | boolean | undefined>;

function parse(
  args: string[],
  options: Record<string, { type: "string" | "boolean" }>,
  positionals: boolean,
) {
  try {
    return parseArgs({
      args,
      options: { ...options, json: { type: "boolean" }, help: { type: "boolean", short: "h" } },
      strict: true,
      allowPositionals: positionals,
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** Runs `herald export …` or `herald import …`; returns the exit code. */
export async function runTransfer(command: "export" | "import", args: string[]): Promise<number> {
  try {
    const output = command === "export" ? await runExport(args) : await runImport(args);
    console.log(output);
    return 0;
  } catch (error) {
    if (!(error instanceof TransferError)) throw error;
    console.error(`herald: ${error.message}`);
    return 1;
  }
}

async function runExport(args: string[]): Promise<string> {
  const { values } = parse(args, { out: { type: "string" } }, false) as { values: Values };
  if (values.help) return EXPORT_HELP;
  if (typeof values.out !== "string" || values.out === "")
    throw new UsageError("--out FILE is required (see herald export --help)");
  const file = values.out;
  if (existsSync(file)) throw new UsageError(`${file} exists; choose another file name or remove it`);
  const config = loadConfig();
  const summary = await withHerald(config, (h) => exportInstallation(h, file));
  return values.json ? JSON.stringify(exportJson(summary)) : exportText(summary, config);
}

async function runImport(args: string[]): Promise<string> {
  const parsed = parse(args, { "allow-missing-blobs": { type: "boolean" } }, true);
  const values = parsed.values as Values;
  if (values.help) return IMPORT_HELP;
  if (parsed.positionals.length !== 1)
    throw new UsageError("give exactly one FILE to import (see herald import --help)");
  const file = parsed.positionals[0]!;
  if (!existsSync(file)) throw new TransferError(`cannot read ${file}: no such file`);
  const config = loadConfig();
  // Opening Herald would create a new random secret.key, which cannot be the source's.
  if (!config.secretKey && !existsSync(join(config.dataDir, "secret.key")))
    throw new TransferError(
      "no secret key: set HERALD_SECRET_KEY to the source's key, " +
        `or copy the source's secret.key to ${join(config.dataDir, "secret.key")}`,
    );
  const summary = await withHerald(config, (h) =>
    importInstallation(h, file, { allowMissingBlobs: values["allow-missing-blobs"] === true }),
  );
  return values.json ? JSON.stringify(importJson(summary)) : importText(summary, config);
}

/** Opens the configured installation quietly, runs `work` and closes it again. */
async function withHerald<T>(config: Config, work: (h: Herald) => Promise<T>): Promise<T> {
  const h = await openHerald(config, { logger: createLogger({ silent: true }), mail: null }).catch(
    (error: unknown) => {
      if (error instanceof ConfigError) throw error;
      const why = String((error as Error).message ?? error).split("\n")[0];
      throw new TransferError(`cannot open ${databaseOf(config)}: ${why}`, { cause: error });
    },
  );
  try {
    return await work(h);
  } finally {
    await engineOf(h.db).close();
  }
}

/** Where the database is, without a password. */
function databaseOf(config: Config): string {
  if (!config.databaseUrl) return `SQLite ${join(config.dataDir, "herald.db")}`;
  const url = new URL(config.databaseUrl);
  return `PostgreSQL ${url.host}${url.pathname}`;
}

function exportJson(s: ExportSummary) {
  return {
    file: s.file,
    dialect: s.dialect,
    storage: s.storage,
    rows: s.rows,
    total_rows: s.totalRows,
    blobs_included: s.blobsIncluded,
    blobs: s.blobs,
    blob_bytes: s.blobBytes,
    missing_blobs: s.missingBlobs,
  };
}

function exportText(s: ExportSummary, config: Config): string {
  const key = config.secretKey
    ? "the same HERALD_SECRET_KEY"
    : `a copy of ${join(config.dataDir, "secret.key")}`;
  const lines = [
    `Exported ${s.totalRows} rows of ${Object.keys(s.rows).length} tables ` +
      `from ${databaseOf(config)} to ${s.file}` +
      (s.blobsIncluded ? `, with ${s.blobs} blobs (${byteSize(s.blobBytes)}).` : "."),
  ];
  if (!s.blobsIncluded)
    lines.push("Blobs are not in the file (HERALD_STORAGE=s3): give the target the same bucket.");
  if (s.missingBlobs.length > 0)
    lines.push(
      `Warning: ${s.missingBlobs.length} asset blob(s) were missing from the store ` +
        `and are not in the file (first: ${s.missingBlobs[0]}).`,
    );
  lines.push(`The secret key is not in the file: start the target with ${key}.`);
  return lines.join("\n");
}

function importJson(s: ImportSummary) {
  return {
    source: s.source,
    rows: s.rows,
    total_rows: s.totalRows,
    blobs: s.blobs,
    blob_bytes: s.blobBytes,
    missing_blobs: s.missingBlobs,
  };
}

function importText(s: ImportSummary, config: Config): string {
  const counts = Object.entries(s.rows)
    .filter(([, n]) => n > 0)
    .map(([table, n]) => `${table} ${n}`)
    .join(", ");
  const lines = [
    `Imported ${s.totalRows} rows and ${s.blobs} blobs (${byteSize(s.blobBytes)}) ` +
      `into ${databaseOf(config)}` +
      ` (exported by Herald ${s.source.herald} from ${s.source.dialect}).`,
    `Rows: ${counts}.`,
  ];
  if (!s.source.blobs && s.missingBlobs.length === 0)
    lines.push("The file held no blobs (the source used S3); the assets' bytes were found in the bucket.");
  if (s.missingBlobs.length > 0)
    lines.push(
      `Warning: ${s.missingBlobs.length} ready asset(s) have no bytes (first: ${s.missingBlobs[0]}).`,
    );
  return lines.join("\n");
}
