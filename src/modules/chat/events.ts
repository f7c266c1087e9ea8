import type { Db } from "../../db/open.ts";
import { markReauthorizationRequired } from "../destinations/repo.ts";
import { insertOutboxEvent } from "../webhooks/repo.ts";

/** The outbox event written when a destination must be connected again (for chat notifications). */
export const DESTINATION_REAUTHORIZATION_EVENT = "destination.reauthorization_required";

/**
 * Marks a destination `reauthorization_required` and, when that is news (it was usable until now),
 * writes the `destination.reauthorization_required` event into the outbox in the same transaction,
 * so chat notifications hear of it once however many posts or renewals run into it.
 */
export async function markDestinationForReauthorization(
  db: Db,
  destinationId: string,
  now: number,
): Promise<void> {
  const row = await markReauthorizationRequired(db, destinationId, now);
  if (!row) return;
  await insertOutboxEvent(
    db,
    {
      workspaceId: row.workspaceId,
      type: DESTINATION_REAUTHORIZATION_EVENT,
      payload: {
        id: row.id,
        object: "destination",
        channel: row.channel,
        display_name: row.displayName,
        handle: row.handle,
        unavailable_reason: "reauthorization_required",
      },
    },
    now,
  );
}
