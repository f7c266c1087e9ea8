// `herald backup` and `herald restore`: arguments, help and output; the work is in src/modules/backup.
import { byteSize } from "./format.ts";
import { loadConfig } from "../config.ts";
import { takeBackup } from "../modules/backup/backup.ts";
import { BackupError } from "../modules/backup/format.ts";
import { restoreBackup } from "../modules/backup/restore.ts";
import { flag, parseCommand, str } from "./args.ts";
import { UsageError } from "./errors.ts";

export const BACKUP_HELP = `Usage: herald backup --out FILE [--with-secret-key] [--json]

Writes a consistent backup of the installation to FILE (a new file, mode 0600; a tar archive) while
the server keeps running and writing: the database (SQLite: a snapshot through VACUUM INTO;
PostgreSQL: pg_dump -Fc, which must be installed) and, with HERALD_STORAGE=local, every blob. Rows
committed before the backup started are in it, with their blobs.

The secret key is NOT in the file unless --with-secret-key is given (then the file opens every
sealed credential: keep it as safe as the key). Without it, keep a copy of HERALD_SECRET_KEY or
<HERALD_DATA_DIR>/secret.key elsewhere.

  --out FILE          where to write (must not exist)
  --with-secret-key   include the secret key
  --json              print a JSON summary

Restore with: herald restore FILE. See docs/operations.md.`;

export const RESTORE_HELP = `Usage: herald restore FILE [--json]

Restores a backup (herald backup) into an EMPTY data directory (HERALD_DATA_DIR; created when
absent) and, on PostgreSQL, an empty database (HERALD_DATABASE_URL; pg_restore must be installed).
Every entry is checked against the backup's SHA-256 sums; the SQLite database must pass
PRAGMA integrity_check and every live asset must have its blob, or the restore is undone.

The target needs the source's secret key: in the backup (--with-secret-key), or HERALD_SECRET_KEY
set to it (checked against the backup). Then start the server: herald serve.

  --json   print a JSON summary`;

async function backup(args: string[]): Promise<string> {
  const options = { out: { type: "string" }, "with-secret-key": { type: "boolean" } } as const;
  const parsed = parseCommand(args, options, [0, 0], "herald backup --help");
  if (flag(parsed, "help")) return BACKUP_HELP;
  const out = str(parsed, "out");
  if (!out) throw new UsageError("--out FILE is required (see herald backup --help)");
  const summary = await takeBackup(loadConfig(), out, { withSecretKey: flag(parsed, "with-secret-key") });
  if (flag(parsed, "json")) return JSON.stringify(summary);
  const blobs = summary.blobs_in_file
    ? `${summary.blobs} blobs (${byteSize(summary.blob_bytes)})`
    : "no blobs (HERALD_STORAGE=s3: they stay in the bucket)";
  const key = summary.secret_key_included
    ? "The secret key IS in the file: keep it as safe as the key."
    : "The secret key is not in the file: keep HERALD_SECRET_KEY or secret.key safe elsewhere.";
  return (
    `Backed up ${summary.dialect} database (${byteSize(summary.database_bytes)}) and ${blobs} ` +
    `to ${summary.file} in ${summary.seconds} s.\n${key}`
  );
}

async function restore(args: string[]): Promise<string> {
  const parsed = parseCommand(args, {}, [1, 1], "herald restore --help");
  if (flag(parsed, "help")) return RESTORE_HELP;
  const summary = await restoreBackup(loadConfig(), parsed.positionals[0]!);
  if (flag(parsed, "json")) return JSON.stringify(summary);
  return (
    `Restored the ${summary.dialect} backup of ${summary.created_at} into ${summary.data_dir}: ` +
    `${summary.blobs} blobs (${byteSize(summary.blob_bytes)})` +
    `${summary.secret_key_restored ? ", the secret key" : ""}. Start it with: herald serve`
  );
}

/** Runs `herald backup …` or `herald restore …`; returns the exit code. */
export async function runBackupCommand(command: "backup" | "restore", args: string[]): Promise<number> {
  try {
    console.log(command === "backup" ? await backup(args) : await restore(args));
    return 0;
  } catch (error) {
    if (!(error instanceof BackupError)) throw error;
    console.error(`herald: ${error.message}`);
    return 1;
  }
}
