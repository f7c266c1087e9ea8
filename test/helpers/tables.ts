// The tables, for tests that read or write rows directly: built for the engine this run uses
// (database.ts), the same definitions `tablesOf(db)` gives every server of the run.
import { defineTables } from "../../src/db/tables.ts";
import { sqliteBuilders } from "../../src/db/tables/builders.ts";
import { POSTGRES_URL } from "./database.ts";

const builders = POSTGRES_URL
  ? (await import("../../src/db/tables/builders-pg.ts")).pgBuilders
  : sqliteBuilders;

/** Every table of the run's engine (`const { posts } = tables`). */
export const tables = defineTables(builders);
