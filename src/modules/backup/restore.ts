// `herald restore FILE`: unpacks a backup into an EMPTY data directory (and, on PostgreSQL, an empty
// database through pg_restore), checking every entry against SHA256SUMS as it is written. A refused
// or failed restore leaves the data directory empty again.
import { SQL } from "bun";
import { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, open, readdir, rename, rm, type FileHandle } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Config } from "../../config.ts";
import { HERALD_VERSION } from "../../herald.ts";
import { postgresMigrations, sqliteMigrations } from "../../db/migrations-macro.ts";
import { isValidBlobKey } from "../../blobs/store.ts";
import {
  BACKUP_FORMAT,
  BACKUP_VERSION,
  BLOB_PREFIX,
  BackupError,
  MANIFEST,
  PG_ENTRY,
  secretCheckOf,
  SECRET_ENTRY,
  SQLITE_ENTRY,
  SUMS,
  type Manifest,
} from "./format.ts";
import { findPgTool, pgConnection, runPgTool } from "./pg-tools.ts";
import { ArchiveError, entryChunks, listEntries, type TarEntry } from "./tar.ts";

export interface RestoreSummary {
  data_dir: string;
  dialect: "sqlite" | "postgresql";
  created_at: string;
  blobs: number;
  blob_bytes: number;
  secret_key_restored: boolean;
}

async function readText(file: FileHandle, entry: TarEntry): Promise<string> {
  const parts: Uint8Array[] = [];
  for await (const chunk of entryChunks(file, entry)) parts.push(chunk);
  return Buffer.concat(parts).toString("utf8");
}

/** The manifest and the expected SHA-256 of each entry, refusing what is not a Herald backup. */
async function readIndex(file: FileHandle, entries: TarEntry[]) {
  const first = entries[0];
  const last = entries.at(-1);
  if (first?.path !== MANIFEST || last?.path !== SUMS || first.size > 65_536 || last.size > 64 * 1024 * 1024)
    throw new BackupError("not a Herald backup (manifest.json first and SHA256SUMS last are expected)");
  let manifest: Manifest;
  try {
    manifest = JSON.parse(await readText(file, first));
  } catch {
    throw new BackupError("the backup's manifest.json is not JSON");
  }
  if (manifest.format !== BACKUP_FORMAT || manifest.version !== BACKUP_VERSION)
    throw new BackupError(
      `not a Herald backup of version ${BACKUP_VERSION} (${manifest.format} ${manifest.version})`,
    );
  const sums = new Map<string, string>();
  for (const line of (await readText(file, last)).split("\n")) {
    const match = /^([0-9a-f]{64}) {2}(.+)$/.exec(line);
    if (match) sums.set(match[2]!, match[1]!);
  }
  for (const entry of entries.slice(0, -1))
    if (!sums.has(entry.path)) throw new BackupError(`${entry.path} has no line in SHA256SUMS`);
  return { manifest, sums };
}

/** Whether the target database holds any table (pg_restore needs a fresh, empty database). */
async function postgresIsEmpty(databaseUrl: string): Promise<boolean> {
  const sql = new SQL(databaseUrl, { max: 1 });
  try {
    const rows = await sql.unsafe("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'");
    return (rows as { n: number }[])[0]!.n === 0;
  } finally {
    await sql.close();
  }
}

/**
 * Refuses a backup of a database a newer Herald migrated (its last migration is not one this binary
 * carries): restored, it would not start (src/db/newer-database.ts), so say so before writing anything.
 */
function refuseNewerBackup(manifest: Manifest): void {
  if (manifest.migration === null) return;
  const embedded = manifest.dialect === "sqlite" ? sqliteMigrations() : postgresMigrations();
  if (embedded.some((m) => m.tag === manifest.migration)) return;
  throw new BackupError(
    `the backup was made by Herald ${manifest.herald} on a database with migration ${manifest.migration}, ` +
      `which this binary (Herald ${HERALD_VERSION}) does not know; restore it with Herald ${manifest.herald} or newer`,
  );
}

/** Restores the backup `path` into the installation `config` describes. */
export async function restoreBackup(config: Config, path: string): Promise<RestoreSummary> {
  const file = await open(path, "r").catch(() => {
    throw new BackupError(`cannot read ${path}`);
  });
  try {
    const entries = await listEntries(file).catch((error) => {
      if (error instanceof ArchiveError) throw new BackupError(`${path}: ${error.message}`);
      throw error;
    });
    const { manifest, sums } = await readIndex(file, entries);
    const dialect = config.databaseUrl ? "postgresql" : "sqlite";
    if (manifest.dialect !== dialect)
      throw new BackupError(
        `the backup is of a ${manifest.dialect} installation and the target is ${dialect}; ` +
          "move between engines with herald export / herald import",
      );
    refuseNewerBackup(manifest);
    const dataDir = config.dataDir;
    const existing = await readdir(dataDir).catch(() => null);
    if (existing && existing.length > 0)
      throw new BackupError(`${dataDir} is not empty; restore only into an empty data directory`);
    const secretIncluded = entries.some((e) => e.path === SECRET_ENTRY);
    if (!secretIncluded && !config.secretKey && manifest.secret_check !== null)
      throw new BackupError(
        "the backup has no secret key: set HERALD_SECRET_KEY to the source's key " +
          "(or back up with --with-secret-key)",
      );
    if (!secretIncluded && config.secretKey && manifest.secret_check !== null)
      if (secretCheckOf(config.secretKey) !== manifest.secret_check)
        throw new BackupError("HERALD_SECRET_KEY is not the key the backup was made with");
    if (dialect === "postgresql" && !(await postgresIsEmpty(config.databaseUrl!)))
      throw new BackupError("the target database has tables; restore only into a new, empty database");

    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    try {
      return await unpack(config, file, entries, sums, manifest);
    } catch (error) {
      // The directory was empty: put it back that way.
      for (const name of await readdir(dataDir).catch(() => [] as string[]))
        await rm(join(dataDir, name), { recursive: true, force: true });
      throw error;
    }
  } finally {
    await file.close();
  }
}

/** Writes one entry to `target` (through a temporary name), checking its SHA-256. */
async function extract(file: FileHandle, entry: TarEntry, target: string, expected: string): Promise<void> {
  await mkdir(dirname(target), { recursive: true, mode: 0o700 });
  const partial = `${target}.partial`;
  const out = await open(partial, "wx", 0o600);
  const hash = createHash("sha256");
  try {
    for await (const chunk of entryChunks(file, entry)) {
      hash.update(chunk);
      await out.write(chunk);
    }
    await out.sync();
  } finally {
    await out.close();
  }
  if (hash.digest("hex") !== expected)
    throw new BackupError(`${entry.path} does not match its SHA-256: the backup is damaged`);
  await rename(partial, target);
}

async function unpack(
  config: Config,
  file: FileHandle,
  entries: TarEntry[],
  sums: Map<string, string>,
  manifest: Manifest,
): Promise<RestoreSummary> {
  const dataDir = config.dataDir;
  let blobs = 0;
  let blobBytes = 0;
  let secretRestored = false;
  const blobRoot = join(dataDir, "blobs");
  for (const entry of entries.slice(1, -1)) {
    const expected = sums.get(entry.path)!;
    if (entry.path === SQLITE_ENTRY && manifest.dialect === "sqlite") {
      await extract(file, entry, join(dataDir, "herald.db"), expected);
    } else if (entry.path === PG_ENTRY && manifest.dialect === "postgresql") {
      const dump = join(dataDir, ".restore.pgdump");
      await extract(file, entry, dump, expected);
      const { dbname, env } = pgConnection(config.databaseUrl!);
      const restore = [findPgTool("pg_restore"), "--no-owner", "--no-privileges", "--exit-on-error"];
      await runPgTool([...restore, "--single-transaction", `--dbname=${dbname}`, dump], env);
      await rm(dump, { force: true });
    } else if (entry.path === SECRET_ENTRY) {
      await extract(file, entry, join(dataDir, "secret.key"), expected);
      secretRestored = true;
    } else if (entry.path.startsWith(BLOB_PREFIX) && isValidBlobKey(entry.path.slice(BLOB_PREFIX.length))) {
      await extract(file, entry, join(blobRoot, entry.path.slice(BLOB_PREFIX.length)), expected);
      blobs += 1;
      blobBytes += entry.size;
    } else {
      throw new BackupError(`unexpected entry ${entry.path} in the backup`);
    }
  }
  if (manifest.dialect === "sqlite") checkSqlite(join(dataDir, "herald.db"), manifest, blobRoot);
  return {
    data_dir: dataDir,
    dialect: manifest.dialect,
    created_at: manifest.created_at,
    blobs,
    blob_bytes: blobBytes,
    secret_key_restored: secretRestored,
  };
}

/** The restored database passes integrity_check and every live, ready asset has its blob. */
function checkSqlite(path: string, manifest: Manifest, blobRoot: string): void {
  if (!existsSync(path)) throw new BackupError("the backup holds no database");
  const db = new Database(path, { readonly: true });
  try {
    const check = db.query<{ integrity_check: string }, []>("PRAGMA integrity_check").all();
    if (check.length !== 1 || check[0]!.integrity_check !== "ok")
      throw new BackupError("the restored database fails PRAGMA integrity_check");
    if (manifest.storage !== "local") return;
    const keys = db
      .query<{ blob_key: string }, []>(
        "SELECT blob_key FROM assets WHERE status = 'ready' AND deleted_at IS NULL AND blob_key IS NOT NULL",
      )
      .all();
    const missing = keys.filter((k) => !existsSync(join(blobRoot, k.blob_key)));
    if (missing.length > 0)
      throw new BackupError(`the backup lacks blobs of live assets: ${missing[0]!.blob_key}`);
  } finally {
    db.close();
  }
}
