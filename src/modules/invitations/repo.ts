import { desc, eq } from "drizzle-orm";
import type { Db } from "../../db/open.ts";
import { invitations, mailOutbox } from "../../db/schema.ts";

/** A stored invitation with the status of its latest e-mail. */
export type InvitationWithDelivery = typeof invitations.$inferSelect & {
  deliveryStatus: "pending" | "sent" | "failed";
};

/** Stores an invitation and returns its numeric id. */
export function insertInvitation(db: Db, row: Omit<typeof invitations.$inferInsert, "id">): number {
  return db.insert(invitations).values(row).returning({ id: invitations.id }).get().id;
}

/** An invitation with its delivery status. */
export function findInvitation(db: Db, id: number): InvitationWithDelivery | undefined {
  const row = db.select().from(invitations).where(eq(invitations.id, id)).get();
  if (!row) return undefined;
  const mail = db
    .select({ status: mailOutbox.status })
    .from(mailOutbox)
    .where(eq(mailOutbox.invitationId, id))
    .orderBy(desc(mailOutbox.id))
    .limit(1)
    .get();
  return { ...row, deliveryStatus: mail?.status ?? "pending" };
}
