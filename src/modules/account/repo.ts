import { asc, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/open.ts";
import { tablesOf, type Tables } from "../../db/tables.ts";
import { firstRow } from "../../db/engine.ts";

/** A stored account. */
export type AccountRow = Tables["accounts"]["$inferSelect"];

/** An account by id. */
export async function findAccount(db: Db, id: string): Promise<AccountRow | undefined> {
  const { accounts } = tablesOf(db);
  return db.select().from(accounts).where(eq(accounts.id, id)).then(firstRow);
}

/** Whether any account exists (false on a fresh install). */
export async function hasAnyAccount(db: Db): Promise<boolean> {
  const { accounts } = tablesOf(db);
  const row = await db.select({ n: sql<number>`1` }).from(accounts).limit(1).then(firstRow);
  return row !== undefined;
}

/** Stores a new account. */
export async function insertAccount(db: Db, row: AccountRow): Promise<void> {
  const { accounts } = tablesOf(db);
  await db.insert(accounts).values(row);
}

/** A stored user. */
export type UserRow = Tables["users"]["$inferSelect"];

/** A user by e-mail address (addresses are stored lower-cased). */
export async function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  const { users } = tablesOf(db);
  return db.select().from(users).where(eq(users.email, email.toLowerCase())).then(firstRow);
}

/** Stores a new user. */
export async function insertUser(db: Db, row: Tables["users"]["$inferInsert"]): Promise<void> {
  const { users } = tablesOf(db);
  await db.insert(users).values({ ...row, email: row.email.toLowerCase() });
}

/** The people of an account, earliest first (never their password hashes). */
export async function listAccountUsers(
  db: Db,
  accountId: string,
): Promise<{ id: string; email: string; role: UserRow["role"]; createdAt: number }[]> {
  const { users } = tablesOf(db);
  return db
    .select({ id: users.id, email: users.email, role: users.role, createdAt: users.createdAt })
    .from(users)
    .where(eq(users.accountId, accountId))
    .orderBy(asc(users.createdAt), asc(users.id));
}
