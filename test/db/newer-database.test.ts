import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { engineOf } from "../../src/db/engine.ts";
import { NewerDatabaseError } from "../../src/db/newer-database.ts";
import { openDatabase } from "../../src/db/open.ts";
import { herald } from "../cli/helpers.ts";
import { freshDatabase, POSTGRES_URL, type TestDatabase } from "../helpers/database.ts";
import { spawnHerald } from "../helpers/process.ts";

// An older binary on a database a newer Herald migrated: the table `herald_migrations` records a tag
// the binary does not carry. Every command that opens the database refuses it before serving or
// applying anything, on SQLite and PostgreSQL alike (docs/decisions.md, "Issue 29: a database newer
// than the binary").

const dir = mkdtempSync(join(tmpdir(), "herald-newer-db-"));
const databases: TestDatabase[] = [];
afterAll(async () => {
  for (const d of databases) await d.drop();
  rmSync(dir, { recursive: true, force: true });
});

const FUTURE = ["9998_future_columns", "9999_future_rename"];

/** A migrated installation (its own data dir; on PostgreSQL its own database) and its variables. */
async function migratedInstallation(): Promise<{ env: Record<string, string>; dataDir: string }> {
  const dataDir = mkdtempSync(join(dir, "data-"));
  const database = await freshDatabase();
  databases.push(database);
  const env = { HERALD_DATA_DIR: dataDir, ...database.env };
  if (!POSTGRES_URL) {
    const migrated = await herald(["migrate"], env);
    expect(migrated.code).toBe(0);
  }
  return { env, dataDir };
}

/** Runs raw SQL on the installation's database (a connection of its own, closed afterwards). */
async function sql<R>(env: Record<string, string>, dataDir: string, text: string): Promise<R[]> {
  if (env.HERALD_DATABASE_URL) {
    const client = new SQL(env.HERALD_DATABASE_URL, { max: 1 });
    try {
      return (await client.unsafe(text)) as R[];
    } finally {
      await client.close();
    }
  }
  const sqlite = new Database(join(dataDir, "herald.db"));
  try {
    return sqlite.query(text).all() as R[];
  } finally {
    sqlite.close();
  }
}

/** Records `tags` as applied, as a newer Herald's migrate step would have. */
async function applyFutureMigrations(env: Record<string, string>, dataDir: string, tags: string[]) {
  for (const tag of tags)
    await sql(
      env,
      dataDir,
      `INSERT INTO herald_migrations (tag, hash, applied_at) VALUES ('${tag}', 'newer-hash', ${Date.now()})`,
    );
}

async function appliedTags(env: Record<string, string>, dataDir: string): Promise<string[]> {
  const rows = await sql<{ tag: string }>(env, dataDir, "SELECT tag FROM herald_migrations ORDER BY tag");
  return rows.map((r) => r.tag);
}

/** What the refusal says: the unknown tags, who migrated the database, and both ways out. */
function expectRefusal(stderr: string, unknown: string[]) {
  const where = POSTGRES_URL ? "the PostgreSQL database (HERALD_DATABASE_URL)" : "herald.db";
  expect(stderr).toContain(`herald: `);
  expect(stderr).toContain(`${where} was upgraded by a newer Herald`);
  expect(stderr).toContain(
    unknown.length === 1 ? `migration ${unknown[0]},` : `migrations ${unknown.join(", ")},`,
  );
  expect(stderr).toContain("does not know");
  expect(stderr).toContain("Run the newer Herald binary again");
  expect(stderr).toContain("restore the backup taken before the upgrade with this binary");
  expect(stderr).toContain('docs/operations.md, "Upgrading"');
  expect(stderr).not.toMatch(/\n\s+at /); // one message, no stack trace
}

describe("a database a newer Herald migrated", () => {
  test("serve exits 1 with the refusal and never answers /health", async () => {
    const { env, dataDir } = await migratedInstallation();
    await applyFutureMigrations(env, dataDir, FUTURE);
    const before = await appliedTags(env, dataDir);

    const server = await spawnHerald({ env });
    // Poll /health for as long as the process lives: no answer, ever (one ends the wait).
    const answers: number[] = [];
    while (server.running()) {
      const status = await fetch(`${server.url}/health`).then(
        async (r) => {
          await r.arrayBuffer();
          return r.status;
        },
        () => 0,
      );
      if (status !== 0) {
        answers.push(status);
        await server.kill();
      }
      await Bun.sleep(20);
    }
    expect(answers).toEqual([]);
    expect(await server.exited()).toBe(1);
    expect(server.stdout()).toBe("");
    expectRefusal(server.stderr(), FUTURE);
    // Nothing was changed: the rows (the newer version's too) are as they were.
    expect(await appliedTags(env, dataDir)).toEqual(before);
  }, 60_000);

  test("migrate exits 1 with the refusal instead of saying it is up to date", async () => {
    const { env, dataDir } = await migratedInstallation();
    await applyFutureMigrations(env, dataDir, FUTURE.slice(1));
    const result = await herald(["migrate"], env);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stdout).not.toContain("up to date");
    expectRefusal(result.stderr, FUTURE.slice(1));
  }, 60_000);

  test("the operator commands that open the database refuse it as well", async () => {
    const { env, dataDir } = await migratedInstallation();
    await applyFutureMigrations(env, dataDir, FUTURE);
    const out = join(dataDir, "..", `export-${Date.now()}.herald`);
    for (const args of [
      ["admin", "setup-link"],
      ["export", "--out", out],
    ]) {
      const result = await herald(args, env);
      expect(result.code, args.join(" ")).toBe(1);
      expectRefusal(result.stderr, FUTURE);
    }
    expect(existsSync(out)).toBe(false);
  }, 60_000);
});

describe("the migrate step's check, in process", () => {
  test("an empty database recording only a newer migration gets none of this binary's applied", async () => {
    const dataDir = mkdtempSync(join(dir, "empty-"));
    let config = { dataDir, databaseUrl: null as string | null, databasePool: 1 };
    let admin: SQL | null = null;
    const name = `herald_newer_${process.pid}`;
    if (POSTGRES_URL) {
      admin = new SQL(POSTGRES_URL, { max: 1 });
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.unsafe(`CREATE DATABASE ${name}`);
      const url = new URL(POSTGRES_URL);
      url.pathname = `/${name}`;
      config = { ...config, databaseUrl: url.toString() };
    }
    const env: Record<string, string> = config.databaseUrl ? { HERALD_DATABASE_URL: config.databaseUrl } : {};
    try {
      await sql(
        env,
        dataDir,
        "CREATE TABLE herald_migrations (tag TEXT PRIMARY KEY, hash TEXT NOT NULL, applied_at BIGINT NOT NULL)",
      );
      await applyFutureMigrations(env, dataDir, FUTURE);

      const error = await openDatabase(config).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(NewerDatabaseError);
      expect((error as NewerDatabaseError).unknown).toEqual(FUTURE);
      // Refused before applying: the table still holds the newer tags only, and no table was made.
      expect(await appliedTags(env, dataDir)).toEqual(FUTURE);
      const tables = POSTGRES_URL
        ? await sql<{ name: string }>(
            env,
            dataDir,
            "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'",
          )
        : await sql<{ name: string }>(env, dataDir, "SELECT name FROM sqlite_master WHERE type = 'table'");
      expect(tables.map((t) => t.name)).toEqual(["herald_migrations"]);
    } finally {
      if (admin) {
        await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await admin.close();
      }
    }
  });

  test("a known migration recorded with another hash is accepted, as before (the hash is not compared)", async () => {
    const { env, dataDir } = await migratedInstallation();
    const [first] = await appliedTags(env, dataDir);
    await sql(env, dataDir, `UPDATE herald_migrations SET hash = 'edited' WHERE tag = '${first}'`);
    const db = await openDatabase({
      dataDir,
      databaseUrl: env.HERALD_DATABASE_URL ?? null,
      databasePool: 1,
    });
    expect(engineOf(db).migrated).toEqual([]);
    await engineOf(db).close();
  });
});
