// The backup file (docs/operations.md, "Backups"): a POSIX tar archive of
//   manifest.json                 what the archive holds (first entry)
//   herald.db | herald.pgdump     the database: a SQLite snapshot (VACUUM INTO), or pg_dump -Fc
//   blobs/<key>                   local media blobs (HERALD_STORAGE=local only)
//   secret.key                    only with --with-secret-key
//   SHA256SUMS                    `sha256sum -c` lines for every entry above (last entry)
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../../config.ts";
import { SecretBox } from "../../lib/crypto.ts";

export const BACKUP_FORMAT = "herald-backup";
export const BACKUP_VERSION = 1;
export const MANIFEST = "manifest.json";
export const SUMS = "SHA256SUMS";
export const SQLITE_ENTRY = "herald.db";
export const PG_ENTRY = "herald.pgdump";
export const SECRET_ENTRY = "secret.key";
export const BLOB_PREFIX = "blobs/";

export interface Manifest {
  format: typeof BACKUP_FORMAT;
  version: number;
  herald: string;
  created_at: string;
  dialect: "sqlite" | "postgresql";
  storage: "local" | "s3";
  /** A MAC of a fixed text under the secret key (reveals nothing of it); null when there was none. */
  secret_check: string | null;
  secret_key_included: boolean;
  /** The last migration the database had. */
  migration: string | null;
  /** Blobs the snapshot's live, ready assets use: each is in the archive. */
  required_blobs: number;
}

/** A refused or failed backup or restore: one line for the operator. */
export class BackupError extends Error {}

/** The installation's secret key when it has one (HERALD_SECRET_KEY or secret.key), never creating it. */
export function existingSecretKey(config: Config): string | null {
  if (config.secretKey) return config.secretKey;
  const path = join(config.dataDir, "secret.key");
  return existsSync(path) ? readFileSync(path, "utf8").trim() : null;
}

export function secretCheckOf(secret: string): string {
  return new SecretBox(secret).sign("backup", "herald-backup-secret-check");
}
