import { eq, sql } from "drizzle-orm";
import type { Db } from "../../db/open.ts";
import { accounts, users } from "../../db/schema.ts";

/** A stored account. */
export type AccountRow = typeof accounts.$inferSelect;

/** An account by id. */
export function findAccount(db: Db, id: string): AccountRow | undefined {
  return db.select().from(accounts).where(eq(accounts.id, id)).get();
}

/** Whether any account exists (false on a fresh install). */
export function hasAnyAccount(db: Db): boolean {
  return db.select({ n: sql<number>`1` }).from(accounts).limit(1).get() !== undefined;
}

/** Stores a new account. */
export function insertAccount(db: Db, row: AccountRow): void {
  db.insert(accounts).values(row).run();
}

/** A user by e-mail address (addresses are stored lower-cased). */
export function findUserByEmail(db: Db, email: string) {
  return db.select().from(users).where(eq(users.email, email.toLowerCase())).get();
}

/** Stores a new user. */
export function insertUser(db: Db, row: typeof users.$inferInsert): void {
  db.insert(users)
    .values({ ...row, email: row.email.toLowerCase() })
    .run();
}
