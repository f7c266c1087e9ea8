import { defineConfig } from "drizzle-kit";

// src/db/drizzle-kit/tables.ts builds every table with this dialect's builders.
process.env.HERALD_MIGRATIONS_DIALECT = "sqlite";

// SQLite migrations; PostgreSQL's are generated with drizzle.pg.config.ts (npm run db:generate does both).
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/db/drizzle-kit/tables.ts",
  out: "./migrations/sqlite",
});
