import { and, desc, eq, inArray, isNull, lt, type SQL } from "drizzle-orm";
import type { Db } from "../../db/open.ts";
import { tablesOf, type Tables } from "../../db/tables.ts";
import { firstRow } from "../../db/engine.ts";

/** A stored invitation. */
export type InvitationRow = Tables["invitations"]["$inferSelect"];

/** A stored invitation with the status of its latest e-mail. */
export type InvitationWithDelivery = InvitationRow & {
  deliveryStatus: "pending" | "sent" | "failed";
};

/** Stores an invitation and returns its numeric id. */
export async function insertInvitation(
  db: Db,
  row: Omit<Tables["invitations"]["$inferInsert"], "id">,
): Promise<number> {
  const { invitations } = tablesOf(db);
  const [inserted] = await db.insert(invitations).values(row).returning({ id: invitations.id });
  return inserted!.id;
}

/** Adds the status of each invitation's latest e-mail. */
async function withDelivery(db: Db, rows: InvitationRow[]): Promise<InvitationWithDelivery[]> {
  const { mailOutbox } = tablesOf(db);
  if (rows.length === 0) return [];
  const mails = await db
    .select({ invitationId: mailOutbox.invitationId, status: mailOutbox.status })
    .from(mailOutbox)
    .where(
      inArray(
        mailOutbox.invitationId,
        rows.map((r) => r.id),
      ),
    )
    .orderBy(desc(mailOutbox.id));
  // Newest mail first: the first status seen per invitation is its latest e-mail's.
  const latest = new Map<number, InvitationWithDelivery["deliveryStatus"]>();
  for (const m of mails)
    if (m.invitationId !== null && !latest.has(m.invitationId)) latest.set(m.invitationId, m.status);
  return rows.map((row) => ({ ...row, deliveryStatus: latest.get(row.id) ?? "pending" }));
}

/** An invitation with its delivery status. */
export async function findInvitation(db: Db, id: number): Promise<InvitationWithDelivery | undefined> {
  const { invitations } = tablesOf(db);
  const row = await db.select().from(invitations).where(eq(invitations.id, id)).then(firstRow);
  return row ? (await withDelivery(db, [row]))[0] : undefined;
}

/** An account's open invitation (neither revoked nor accepted) by id; others are not found. */
export async function findOpenInvitation(
  db: Db,
  accountId: string,
  id: number,
): Promise<InvitationRow | undefined> {
  const { invitations } = tablesOf(db);
  return db
    .select()
    .from(invitations)
    .where(
      and(
        eq(invitations.accountId, accountId),
        eq(invitations.id, id),
        isNull(invitations.revokedAt),
        isNull(invitations.acceptedAt),
      ),
    )
    .then(firstRow);
}

/** The invitation an e-mailed link's token belongs to (by the token's hash), whatever its state. */
export async function findInvitationByTokenHash(
  db: Db,
  tokenHash: string,
): Promise<InvitationRow | undefined> {
  const { invitations } = tablesOf(db);
  return db.select().from(invitations).where(eq(invitations.tokenHash, tokenHash)).then(firstRow);
}

const open = (invitations: Tables["invitations"], accountId: string) =>
  and(eq(invitations.accountId, accountId), isNull(invitations.revokedAt), isNull(invitations.acceptedAt));

/** An account's open invitations, newest first, each with its latest e-mail's status. */
export async function listInvitations(db: Db, accountId: string): Promise<InvitationWithDelivery[]> {
  const { invitations } = tablesOf(db);
  const rows = await db
    .select()
    .from(invitations)
    .where(open(invitations, accountId))
    .orderBy(desc(invitations.id));
  return withDelivery(db, rows);
}

/** One page (plus one row) of an account's open invitations, newest first. */
export async function listInvitationsPage(
  db: Db,
  accountId: string,
  afterId: number | null,
  limit: number,
): Promise<InvitationWithDelivery[]> {
  const { invitations } = tablesOf(db);
  const conditions: SQL[] = [open(invitations, accountId)!];
  if (afterId !== null) conditions.push(lt(invitations.id, afterId));
  const rows = await db
    .select()
    .from(invitations)
    .where(and(...conditions))
    .orderBy(desc(invitations.id))
    .limit(limit + 1);
  return withDelivery(db, rows);
}

/** Changes an invitation's columns. */
export async function updateInvitation(db: Db, id: number, changes: Partial<InvitationRow>): Promise<void> {
  const { invitations } = tablesOf(db);
  await db.update(invitations).set(changes).where(eq(invitations.id, id));
}

/** Marks an open invitation accepted; false when it was accepted or revoked meanwhile. */
export async function markInvitationAccepted(db: Db, id: number, now: number): Promise<boolean> {
  const { invitations } = tablesOf(db);
  const changed = await db
    .update(invitations)
    .set({ acceptedAt: now })
    .where(and(eq(invitations.id, id), isNull(invitations.revokedAt), isNull(invitations.acceptedAt)))
    .returning({ id: invitations.id });
  return changed.length === 1;
}

/**
 * Withdraws an invitation's e-mails still waiting in the outbox (revoked, or replaced by a resend):
 * the link they carry no longer works, so they must not go out.
 */
export async function withdrawPendingMail(db: Db, invitationId: number, reason: string): Promise<void> {
  const { mailOutbox } = tablesOf(db);
  await db
    .update(mailOutbox)
    .set({ status: "failed", lastError: reason, sealedBody: null })
    .where(and(eq(mailOutbox.invitationId, invitationId), eq(mailOutbox.status, "pending")));
}
