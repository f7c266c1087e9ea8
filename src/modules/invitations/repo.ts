import { and, desc, eq, inArray, isNull } from "drizzle-orm";
import type { Db } from "../../db/open.ts";
import { invitations, mailOutbox } from "../../db/schema.ts";
import { firstRow } from "../../db/engine.ts";

/** A stored invitation with the status of its latest e-mail. */
export type InvitationWithDelivery = typeof invitations.$inferSelect & {
  deliveryStatus: "pending" | "sent" | "failed";
};

/** Stores an invitation and returns its numeric id. */
export async function insertInvitation(
  db: Db,
  row: Omit<typeof invitations.$inferInsert, "id">,
): Promise<number> {
  const [inserted] = await db.insert(invitations).values(row).returning({ id: invitations.id });
  return inserted!.id;
}

/** An invitation with its delivery status. */
export async function findInvitation(db: Db, id: number): Promise<InvitationWithDelivery | undefined> {
  const row = await db.select().from(invitations).where(eq(invitations.id, id)).then(firstRow);
  if (!row) return undefined;
  const mail = await db
    .select({ status: mailOutbox.status })
    .from(mailOutbox)
    .where(eq(mailOutbox.invitationId, id))
    .orderBy(desc(mailOutbox.id))
    .limit(1)
    .then(firstRow);
  return { ...row, deliveryStatus: mail?.status ?? "pending" };
}

/** An account's invitations that were not revoked, newest first, each with its latest e-mail's status. */
export async function listInvitations(db: Db, accountId: string): Promise<InvitationWithDelivery[]> {
  const rows = await db
    .select()
    .from(invitations)
    .where(and(eq(invitations.accountId, accountId), isNull(invitations.revokedAt)))
    .orderBy(desc(invitations.id));
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
