// `herald backup`: one consistent snapshot of the database, taken while the server keeps writing
// (SQLite: VACUUM INTO reads one read transaction; PostgreSQL: pg_dump reads one snapshot), then the
// local blobs, pinned around it with hard links (blobs.ts) and copied after it. A blob the snapshot's
// live assets use was in place before its row committed, so it is pinned; blobs written after the
// snapshot are extra and harmless.
import { SQL } from "bun";
import { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import { createReadStream, existsSync } from "node:fs";
import { open, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Config } from "../../config.ts";
import { HERALD_VERSION } from "../../herald.ts";
import { BlobPins } from "./blobs.ts";
import {
  BACKUP_FORMAT,
  BACKUP_VERSION,
  BLOB_PREFIX,
  BackupError,
  existingSecretKey,
  MANIFEST,
  PG_ENTRY,
  secretCheckOf,
  SECRET_ENTRY,
  SQLITE_ENTRY,
  SUMS,
  type Manifest,
} from "./format.ts";
import { findPgTool, pgConnection, runPgTool } from "./pg-tools.ts";
import { TarWriter } from "./tar.ts";

export interface BackupSummary {
  file: string;
  dialect: "sqlite" | "postgresql";
  database_bytes: number;
  blobs: number;
  blob_bytes: number;
  blobs_in_file: boolean;
  secret_key_included: boolean;
  seconds: number;
}

/** What the snapshot's rows need: live, ready assets' blob keys, and the last migration. */
interface SnapshotFacts {
  required: string[];
  migration: string | null;
}

const REQUIRED_BLOBS_SQL =
  "SELECT blob_key FROM assets WHERE status = 'ready' AND deleted_at IS NULL AND blob_key IS NOT NULL";
const LAST_MIGRATION_SQL = "SELECT max(tag) AS tag FROM herald_migrations";

/** SQLite: VACUUM INTO a new file (a compact, consistent copy), checked with integrity_check. */
function snapshotSqlite(dataDir: string, target: string): SnapshotFacts {
  const path = join(dataDir, "herald.db");
  if (!existsSync(path)) throw new BackupError(`no database at ${path} (check HERALD_DATA_DIR)`);
  const source = new Database(path, { readonly: true });
  try {
    source.exec("PRAGMA busy_timeout = 10000");
    source.query("VACUUM INTO ?").run(target);
  } finally {
    source.close();
  }
  const copy = new Database(target, { readonly: true });
  try {
    const check = copy.query<{ integrity_check: string }, []>("PRAGMA integrity_check").all();
    if (check.length !== 1 || check[0]!.integrity_check !== "ok")
      throw new BackupError(
        `the snapshot failed PRAGMA integrity_check: ${JSON.stringify(check.slice(0, 3))}`,
      );
    const required = copy.query<{ blob_key: string }, []>(REQUIRED_BLOBS_SQL).all();
    const last = copy.query<{ tag: string | null }, []>(LAST_MIGRATION_SQL).get();
    return { required: required.map((r) => r.blob_key), migration: last?.tag ?? null };
  } finally {
    copy.close();
  }
}

/** PostgreSQL: pg_dump -Fc; the blobs required are those of live, ready assets once it is done. */
async function snapshotPostgres(databaseUrl: string, target: string): Promise<SnapshotFacts> {
  const { dbname, env } = pgConnection(databaseUrl);
  await runPgTool([findPgTool("pg_dump"), "--format=custom", "--no-owner", `--file=${target}`, dbname], env);
  const sql = new SQL(databaseUrl, { max: 1 });
  try {
    const required = (await sql.unsafe(REQUIRED_BLOBS_SQL)) as { blob_key: string }[];
    const [last] = (await sql.unsafe(LAST_MIGRATION_SQL)) as { tag: string | null }[];
    return { required: required.map((r) => r.blob_key), migration: last?.tag ?? null };
  } finally {
    await sql.close();
  }
}

/** Snapshots taken before giving up on a blob deleted between a snapshot and its second pin pass. */
const SNAPSHOT_ATTEMPTS = 5;

/**
 * The database snapshot and the blob keys to copy. Blobs are pinned before and after the snapshot;
 * an asset uploaded after the first pass and deleted in the moment between the snapshot and the
 * second leaves the snapshot needing bytes that are gone. That is a race with live traffic, not
 * damage, so the snapshot is taken again (the pins already held stay) before the backup fails.
 */
async function snapshotWithBlobs(
  config: Config,
  dialect: "sqlite" | "postgresql",
  snapshot: string,
  pins: BlobPins,
): Promise<{ facts: SnapshotFacts; keys: string[] }> {
  const local = config.storage === "local";
  for (let attempt = 1; ; attempt++) {
    if (local) await pins.pinAll();
    const facts =
      dialect === "sqlite"
        ? snapshotSqlite(config.dataDir, snapshot)
        : await snapshotPostgres(config.databaseUrl!, snapshot);
    const keys = local ? await pins.pinAll() : [];
    const listed = new Set(keys);
    const missing = local ? facts.required.filter((k) => !listed.has(k)) : [];
    if (missing.length === 0) return { facts, keys };
    await rm(snapshot, { force: true });
    if (attempt === SNAPSHOT_ATTEMPTS)
      throw new BackupError(
        `blobs of live assets are missing from ${join(config.dataDir, "blobs")}: ` +
          missing.slice(0, 5).join(", "),
      );
  }
}

/** The archive being written and each entry's SHA-256, for the SUMS entry that closes it. */
class SummedArchive {
  private readonly sums: string[] = [];
  constructor(private readonly tar: TarWriter) {}

  async add(path: string, size: number, chunks: AsyncIterable<Uint8Array> | Uint8Array[]): Promise<void> {
    const hash = createHash("sha256");
    await this.tar.add(path, size, chunks, (chunk) => hash.update(chunk));
    this.sums.push(`${hash.digest("hex")}  ${path}`);
  }

  /** A small entry of text, written whole. */
  async addText(path: string, text: string): Promise<void> {
    const bytes = new TextEncoder().encode(text);
    await this.add(path, bytes.length, [bytes]);
  }

  /** SUMS (the one entry not summed) and the end of the archive. */
  async finish(): Promise<void> {
    const sumsBytes = new TextEncoder().encode(this.sums.join("\n") + "\n");
    await this.tar.add(SUMS, sumsBytes.length, [sumsBytes]);
    await this.tar.finish();
  }
}

/** What restore reads first: the format, where the backup came from and what it holds. */
function backupManifest(
  config: Config,
  dialect: "sqlite" | "postgresql",
  secret: string | null,
  withSecretKey: boolean,
  facts: SnapshotFacts,
): Manifest {
  return {
    format: BACKUP_FORMAT,
    version: BACKUP_VERSION,
    herald: HERALD_VERSION,
    created_at: new Date().toISOString(),
    dialect,
    storage: config.storage,
    secret_check: secret ? secretCheckOf(secret) : null,
    secret_key_included: withSecretKey,
    migration: facts.migration,
    required_blobs: config.storage === "local" ? facts.required.length : 0,
  };
}

/** Copies the database snapshot into the archive and removes it; returns its size in bytes. */
async function addSnapshot(
  archive: SummedArchive,
  dialect: "sqlite" | "postgresql",
  snapshot: string,
): Promise<number> {
  const databaseBytes = (await stat(snapshot)).size;
  const databaseEntry = dialect === "sqlite" ? SQLITE_ENTRY : PG_ENTRY;
  await archive.add(databaseEntry, databaseBytes, createReadStream(snapshot, { highWaterMark: 1024 * 1024 }));
  await rm(snapshot, { force: true });
  return databaseBytes;
}

/** Copies the pinned blobs into the archive; returns how many went in and their bytes. */
async function addBlobs(
  archive: SummedArchive,
  pins: BlobPins,
  keys: string[],
  requiredKeys: string[],
): Promise<{ blobs: number; blobBytes: number }> {
  const required = new Set(requiredKeys);
  let blobs = 0;
  let blobBytes = 0;
  for (const key of keys) {
    const blob = await pins.open(key);
    if (!blob) {
      // Gone since the listing: only a deleted asset's bytes may go (its cleanup ran meanwhile).
      if (required.has(key)) throw new BackupError(`the blob ${key} of a live asset disappeared`);
      continue;
    }
    await archive.add(BLOB_PREFIX + key, blob.size, blob.chunks);
    blobs += 1;
    blobBytes += blob.size;
  }
  return { blobs, blobBytes };
}

/** Writes a backup of the installation `config` describes to `out` (which must not exist). */
export async function takeBackup(
  config: Config,
  out: string,
  options: { withSecretKey?: boolean } = {},
): Promise<BackupSummary> {
  const started = performance.now();
  if (existsSync(out)) throw new BackupError(`${out} exists; choose a new file name`);
  const secret = existingSecretKey(config);
  const withSecretKey = options.withSecretKey === true;
  if (withSecretKey && !secret) throw new BackupError("there is no secret key to include");
  const dialect = config.databaseUrl ? "postgresql" : "sqlite";
  // Written under a temporary name and renamed when complete: `out` is never a partial backup.
  const partial = `${out}.partial-${process.pid}`;
  const snapshot = `${partial}.${dialect === "sqlite" ? "db" : "pgdump"}`;
  const file = await open(partial, "wx", 0o600);
  const local = config.storage === "local";
  const pins = new BlobPins(join(config.dataDir, "blobs"));
  let done = false;
  try {
    if (local) await pins.sweepStale();
    const { facts, keys } = await snapshotWithBlobs(config, dialect, snapshot, pins);
    const archive = new SummedArchive(new TarWriter(file));
    const manifest = backupManifest(config, dialect, secret, withSecretKey, facts);
    await archive.addText(MANIFEST, JSON.stringify(manifest, null, 2) + "\n");
    const databaseBytes = await addSnapshot(archive, dialect, snapshot);
    const { blobs, blobBytes } = await addBlobs(archive, pins, keys, facts.required);
    if (withSecretKey) await archive.addText(SECRET_ENTRY, secret + "\n");
    await archive.finish();
    await file.sync();
    await file.close();
    await rename(partial, out);
    done = true;
    return {
      file: out,
      dialect,
      database_bytes: databaseBytes,
      blobs,
      blob_bytes: blobBytes,
      blobs_in_file: local,
      secret_key_included: withSecretKey,
      seconds: Math.round(performance.now() - started) / 1000,
    };
  } finally {
    if (!done) {
      await file.close().catch(() => {});
      await rm(partial, { force: true });
    }
    await rm(snapshot, { force: true });
    await pins.release();
  }
}
