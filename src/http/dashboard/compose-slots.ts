import { DateTime } from "luxon";
import { findFreeQueueSlot } from "../../modules/posts/queue.ts";
import type { DashboardRequest } from "./router.ts";

/** The workspace's local time now, as the time picker's hint says it ("Sun 1 Mar 13:00"). */
export function nowInZone(r: DashboardRequest): string {
  return DateTime.fromMillis(r.h.clock.now(), { zone: r.workspace!.timeZone })
    .setLocale("en-GB")
    .toFormat("ccc d LLL HH:mm");
}

/**
 * "Next queue slot: Tue 3 Dec 09:00 Europe/Paris": the window `when: queue` would take now for the
 * chosen destinations (a window holds one post per destination), read with the function Create Post
 * uses. The contract has no route for it, so this is one of the dashboard's named module reads.
 */
export async function nextQueueSlotText(r: DashboardRequest, destinationIds: string[]): Promise<string> {
  const workspace = r.workspace!;
  const slot = await findFreeQueueSlot(r.h.db, {
    workspaceId: workspace.id,
    destinationIds: destinationIds.slice(0, 100),
    timeZone: workspace.timeZone,
    now: r.h.clock.now(),
  });
  if (!slot) return "No free queue slot: set the posting windows in the workspace's settings.";
  const local = DateTime.fromMillis(slot.at, { zone: workspace.timeZone }).setLocale("en-GB");
  return `Next queue slot: ${local.toFormat("ccc d LLL HH:mm")} ${workspace.timeZone}`;
}
