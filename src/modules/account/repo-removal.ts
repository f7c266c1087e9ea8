// Removing an account with everything of it (the unconfirmed-accounts job), over every table at once:
// which rows belong to an account is read from the schema itself (an `account_id` column, a
// `workspace_id` of one of its workspaces, or a foreign key to a row that belongs to it), so a table
// added later is covered without a line here. Keys are read from the SQLite build of the tables (the
// same definitions on both engines; db/table-definitions.ts); the table objects are the open database's.
import { and, eq, getTableColumns, getTableName, inArray, isNull, or, type SQL } from "drizzle-orm";
import { getTableConfig, type SQLiteColumn, type SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Db } from "../../db/open.ts";
import { byName, DEFINITIONS, FOREIGN_KEY_ORDER } from "../../db/table-definitions.ts";
import { tablesOf } from "../../db/tables.ts";
import { forgetCredentials } from "../keys/credential-cache.ts";

/** Each table's foreign keys as (column, referenced table, referenced column) by database names. */
const REFERENCES = new Map(
  [...DEFINITIONS].map(([name, table]) => [
    name,
    getTableConfig(table).foreignKeys.flatMap((fk) => {
      const reference = fk.reference();
      return reference.columns.length === 1
        ? [
            {
              column: reference.columns[0]!.name,
              table: getTableName(reference.foreignTable),
              foreignColumn: reference.foreignColumns[0]!.name,
            },
          ]
        : [];
    }),
  ]),
);

const DELETE_ORDER = [...FOREIGN_KEY_ORDER].reverse();

/** The column of `table` whose database name is `name`. */
function columnOf(table: SQLiteTable, name: string): SQLiteColumn | undefined {
  return Object.values(getTableColumns(table)).find((c) => c.name === name) as SQLiteColumn | undefined;
}

/**
 * The condition that selects a table's rows of one account; null when the table holds nothing of any
 * account (installation-wide tables such as the registered OAuth apps).
 */
function ownedRows(
  db: Db,
  current: Map<string, SQLiteTable>,
  name: string,
  owner: { accountId: string; emails: string[] },
): SQL | null {
  const { accountId } = owner;
  const table = current.get(name)!;
  if (name === "accounts") return eq(columnOf(table, "id")!, accountId);
  const account = columnOf(table, "account_id");
  if (account) return eq(account, accountId);
  const { workspaces, mailOutbox } = tablesOf(db);
  const conditions: (SQL | undefined)[] = [];
  const workspace = columnOf(table, "workspace_id");
  if (workspace)
    conditions.push(
      inArray(
        workspace,
        db.select({ id: workspaces.id }).from(workspaces).where(eq(workspaces.accountId, accountId)),
      ),
    );
  for (const reference of REFERENCES.get(name)!) {
    if (reference.table === name) continue;
    const parent = current.get(reference.table)!;
    const owned = ownedRows(db, current, reference.table, owner);
    if (owned)
      conditions.push(
        inArray(
          columnOf(table, reference.column)!,
          db
            .select({ id: columnOf(parent, reference.foreignColumn)! })
            .from(parent)
            .where(owned),
        ),
      );
  }
  // Mail to the account's people that is no invitation (their address confirmations).
  if (table === (mailOutbox as unknown as SQLiteTable) && owner.emails.length > 0)
    conditions.push(and(isNull(mailOutbox.invitationId), inArray(mailOutbox.toAddress, owner.emails)));
  return conditions.length > 0 ? or(...conditions)! : null;
}

/**
 * Deletes an account and every row of it in every table, children first; call inside a transaction.
 * Stored files of its assets are left to the assets-cleanup job, which removes objects no row claims.
 */
export async function deleteAccountRows(db: Db, accountId: string): Promise<void> {
  const current = byName(tablesOf(db));
  const { users } = tablesOf(db);
  // Read first: the users go before the mail addressed to them.
  const people = await db.select({ email: users.email }).from(users).where(eq(users.accountId, accountId));
  const owner = { accountId, emails: people.map((p) => p.email) };
  for (const name of DELETE_ORDER) {
    const owned = ownedRows(db, current, name, owner);
    if (owned) await db.delete(current.get(name)!).where(owned);
  }
  forgetCredentials(db);
}
