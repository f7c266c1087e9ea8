import type { Config } from "../config.ts";
import { openSqlite } from "./engine-sqlite.ts";
import { useDialect } from "./schema.ts";

export type { Db } from "./engine.ts";

/**
 * Opens the configured database (PostgreSQL when HERALD_DATABASE_URL is set, else
 * `<dataDir>/herald.db`), applying pending migrations, and points the table bindings at its dialect.
 */
export async function openDatabase(config: Pick<Config, "dataDir" | "databaseUrl" | "databasePool">) {
  if (config.databaseUrl) {
    // Loaded only here: a SQLite server never loads the PostgreSQL driver layer or schema.
    await useDialect("postgresql");
    const { openPostgres } = await import("./engine-postgres.ts");
    return openPostgres(config.databaseUrl, config.databasePool);
  }
  await useDialect("sqlite");
  return openSqlite(config.dataDir);
}
