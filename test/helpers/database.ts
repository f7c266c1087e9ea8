// Which storage engine the suite runs on. Unset HERALD_DATABASE_URL: SQLite files in temp dirs.
// Set (CI's second pass, see README "Tests"): a PostgreSQL server where this process may create
// databases; every test server gets its own database, copied from a migrated template.
import { SQL } from "bun";
import { openDatabase } from "../../src/db/open.ts";
import { engineOf } from "../../src/db/engine.ts";

/** The PostgreSQL server the suite runs on, or null for SQLite. */
export const POSTGRES_URL = process.env.HERALD_DATABASE_URL || null;

/** The key every PostgreSQL test server seals with (the engine requires one). */
export const TEST_SECRET_KEY = "test-secret-key-0123456789abcdefghijklmnopqrstuvwxyz";

let admin: SQL | null = null;
// The template goes when the test process ends (a throwaway cluster removes the rest anyway).
process.once("beforeExit", () => {
  if (admin && template)
    void template
      .then((name) => admin!.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
      .catch(() => {});
});
let template: Promise<string> | null = null;
let counter = 0;

function urlOf(database: string): string {
  const url = new URL(POSTGRES_URL!);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Creates the migrated template once per test process. */
async function templateDatabase(): Promise<string> {
  const name = `herald_tpl_${process.pid}`;
  await admin!.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin!.unsafe(`CREATE DATABASE ${name}`);
  const db = await openDatabase({ dataDir: "", databaseUrl: urlOf(name), databasePool: 1 });
  await engineOf(db).close();
  return name;
}

/** A database for one test server: the variables that select it, and how to remove it. */
export interface TestDatabase {
  env: Record<string, string>;
  drop(): Promise<void>;
}

/** A fresh, migrated, empty database (nothing to do on SQLite: the data dir holds it). */
export async function freshDatabase(): Promise<TestDatabase> {
  if (!POSTGRES_URL) return { env: {}, drop: async () => {} };
  admin ??= new SQL(POSTGRES_URL, { max: 2 });
  template ??= templateDatabase();
  const name = `herald_t_${process.pid}_${++counter}`;
  await admin.unsafe(`CREATE DATABASE ${name} TEMPLATE ${await template}`);
  return {
    env: { HERALD_DATABASE_URL: urlOf(name), HERALD_SECRET_KEY: TEST_SECRET_KEY },
    drop: async () => {
      await admin!.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}
