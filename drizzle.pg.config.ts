import { defineConfig } from "drizzle-kit";

// src/db/drizzle-kit/tables.ts builds every table with this dialect's builders.
process.env.HERALD_MIGRATIONS_DIALECT = "postgresql";

// PostgreSQL migrations; SQLite's are generated with drizzle.config.ts (npm run db:generate does both).
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/db/drizzle-kit/tables.ts",
  out: "./migrations/pg",
});
