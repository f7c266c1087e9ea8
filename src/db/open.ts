import { existsSync } from "node:fs";
import { ConfigError, type Config } from "../config.ts";
import { storageFault, writable } from "../core/storage-problem.ts";
import { openSqlite } from "./engine-sqlite.ts";

export type { Db } from "./engine.ts";

/**
 * Opens the configured database (PostgreSQL when HERALD_DATABASE_URL is set, else
 * `<dataDir>/herald.db`), applying pending migrations. The handle carries its dialect's tables (`tablesOf`).
 */
export async function openDatabase(
  config: Pick<Config, "dataDir" | "databaseUrl" | "databasePool"> & Partial<Pick<Config, "sqliteSync">>,
) {
  if (config.databaseUrl) {
    // Loaded only here: a SQLite server never loads the PostgreSQL driver layer or its table builders.
    const { openPostgres } = await import("./engine-postgres.ts");
    return openPostgres(config.databaseUrl, config.databasePool);
  }
  // Opening writes (WAL files, migrations), and SQLite may wait on a read-only WAL without end: a
  // directory that cannot take writes is an operator's matter, said in one line before trying (a
  // running server whose directory turns read-only answers 503 instead).
  if (existsSync(config.dataDir) && !writable(config.dataDir)) throw readOnly(config.dataDir);
  try {
    return openSqlite(config.dataDir, config.sqliteSync ?? "full");
  } catch (error) {
    if ((error as { code?: string }).code === "EROFS") throw readOnly(config.dataDir);
    if (storageFault(error) === "full")
      throw new ConfigError(`the disk of the data directory ${config.dataDir} is full; free some space`);
    throw error;
  }
}

function readOnly(dataDir: string): ConfigError {
  return new ConfigError(
    `the data directory ${dataDir} is read-only; Herald keeps its database there and must write to ` +
      "it: make it writable (or point HERALD_DATA_DIR at a writable directory)",
  );
}
