import { desc, eq } from "drizzle-orm";
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
