import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { deleteAccountRows } from "../account/repo-removal.ts";
import { accountCreatedAt, hasUnconfirmedAccount, listUnconfirmedAccountsCreatedBefore } from "./repo.ts";

/** How long an account may wait for its address to be confirmed before it is deleted. */
export const UNCONFIRMED_ACCOUNT_TTL_MS = 7 * 24 * 60 * 60 * 1000;
const BATCH = 100;

/**
 * The unconfirmed-accounts job: an account whose address is still unconfirmed 7 days after signup is
 * deleted with everything of it, each in one transaction, which frees the address for a new signup
 * (an address cannot be squatted). Returns how many were deleted.
 */
export async function deleteUnconfirmedAccounts(h: Herald): Promise<number> {
  const before = h.clock.now() - UNCONFIRMED_ACCOUNT_TTL_MS;
  let deleted = 0;
  for (const accountId of await listUnconfirmedAccountsCreatedBefore(h.db, before, BATCH)) {
    const gone = await inTransaction(h.db, async (tx) => {
      // Read again in the transaction: the link may have been used since the list was read.
      const createdAt = await accountCreatedAt(tx, accountId);
      if (createdAt === null || createdAt >= before || !(await hasUnconfirmedAccount(tx, accountId)))
        return false;
      await deleteAccountRows(tx, accountId);
      return true;
    });
    if (!gone) continue;
    deleted++;
    h.logger.info("unconfirmed account deleted", { account_id: accountId });
  }
  return deleted;
}
