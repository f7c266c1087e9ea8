// The PostgreSQL builders behind the same names as SQLite's (builders.ts), cast to their types: the
// tables built with them have identical row types. Loaded only when a PostgreSQL database is opened
// (and by drizzle-kit), so a SQLite server never loads PostgreSQL's column kinds.
import {
  bigint,
  boolean,
  customType,
  index,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import type { TableBuilders } from "./builders.ts";

/** JSON stored as text, like SQLite's `text(name, { mode: "json" })`: both engines hold the same strings. */
const jsonText = customType<{ data: unknown; driverData: string }>({
  dataType: () => "text",
  toDriver: (value) => JSON.stringify(value),
  fromDriver: (value) => JSON.parse(value) as unknown,
});

const builders = {
  table: pgTable,
  text: (name: string, config?: { enum: readonly [string, ...string[]] }) =>
    text(name, config as { enum: [string, ...string[]] } | undefined),
  // int4 would overflow on timestamps in milliseconds.
  integer: (name: string) => bigint(name, { mode: "number" }),
  boolean: (name: string) => boolean(name),
  json: (name: string) => jsonText(name),
  // An identity that still accepts an explicit id, as SQLite's AUTOINCREMENT does (import).
  autoIncrementKey: (name: string) =>
    bigint(name, { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
  index,
  uniqueIndex,
  primaryKey,
} satisfies Record<keyof TableBuilders, unknown>;

/** The PostgreSQL builders, typed as SQLite's. */
export const pgBuilders = builders as unknown as TableBuilders;
