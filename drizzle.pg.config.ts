import { defineConfig } from "drizzle-kit";

// PostgreSQL migrations; SQLite's are generated with drizzle.config.ts (npm run db:generate does both).
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/db/drizzle-kit/pg-tables.ts",
  out: "./migrations/pg",
});
