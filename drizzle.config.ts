import { defineConfig } from "drizzle-kit";

// SQLite migrations; PostgreSQL's are generated with drizzle.pg.config.ts (npm run db:generate does both).
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/db/drizzle-kit/sqlite-tables.ts",
  out: "./migrations/sqlite",
});
