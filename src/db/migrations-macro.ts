// Runs at bundle time (imported `with { type: "macro" }`): the SQL files are read here and inlined
// into the program, so `dist/herald` needs no migrations folder at run time.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createHash } from "node:crypto";

/** One migration as embedded in the program. */
export interface EmbeddedMigration {
  tag: string;
  hash: string;
  statements: string[];
}

/** Reads migrations/<folder>/meta/_journal.json and each SQL file it lists. */
function readMigrations(folder: string): EmbeddedMigration[] {
  const dir = join(import.meta.dir, "..", "..", "migrations", folder);
  const journal = JSON.parse(readFileSync(join(dir, "meta", "_journal.json"), "utf8")) as {
    entries: { tag: string }[];
  };
  return journal.entries.map(({ tag }) => {
    const sql = readFileSync(join(dir, `${tag}.sql`), "utf8");
    return {
      tag,
      hash: createHash("sha256").update(sql).digest("hex"),
      statements: sql
        .split("--> statement-breakpoint")
        .map((s) => s.trim())
        .filter(Boolean),
    };
  });
}

/** SQLite's migrations (migrations/sqlite). */
export function sqliteMigrations(): EmbeddedMigration[] {
  return readMigrations("sqlite");
}

/** PostgreSQL's migrations (migrations/pg). */
export function postgresMigrations(): EmbeddedMigration[] {
  return readMigrations("pg");
}
