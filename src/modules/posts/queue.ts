import { DateTime } from "luxon";
import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { auditActorOf, type Actor } from "../../core/actor.ts";
import { invalid } from "../../core/problem.ts";
import { recordAudit } from "../audit/repo.ts";
import type { Db } from "../../db/open.ts";
import { takenQueueSlots } from "./repo.ts";
import { listQueueWindows, replaceQueueWindows, type QueueWindowRow } from "./repo-queue.ts";
import { LIVE_STATES } from "./states.ts";

/** A window occurrence a post can be placed in. */
export interface QueueSlot {
  windowId: string;
  localDate: string;
  at: number;
}

/** How far ahead the queue looks for a free window. */
const HORIZON_DAYS = 366;

/**
 * The instant a window occurs on a local date in a zone. A time that does not exist that day
 * (spring-forward gap) moves forward by the gap, as clocks do; an ambiguous one (fall-back) takes
 * the first occurrence.
 */
export function windowInstant(localDate: string, localTime: string, timeZone: string): number {
  const [year, month, day] = localDate.split("-").map(Number);
  const [hour, minute] = localTime.split(":").map(Number);
  const resolved = DateTime.fromObject({ year, month, day, hour, minute }, { zone: timeZone });
  // Luxon resolves an ambiguous wall time to its later occurrence; take the earliest instant that
  // shows the same wall time (the offset in force a few hours before is the pre-change one).
  const wall = resolved.toFormat("yyyy-MM-dd HH:mm");
  const earlier = resolved.minus({ hours: 3 }).offset;
  const candidate = DateTime.fromMillis(resolved.toMillis() + (resolved.offset - earlier) * 60_000, {
    zone: timeZone,
  });
  return candidate < resolved && candidate.toFormat("yyyy-MM-dd HH:mm") === wall
    ? candidate.toMillis()
    : resolved.toMillis();
}

/** The windows that occur on one local date, earliest first. */
export function slotsOnDate(windows: QueueWindowRow[], localDate: string, timeZone: string): QueueSlot[] {
  const weekday = DateTime.fromISO(localDate, { zone: timeZone }).weekday;
  return windows
    .filter((w) => w.weekday === weekday)
    .map((w) => ({ windowId: w.id, localDate, at: windowInstant(localDate, w.localTime, timeZone) }))
    .sort((a, b) => a.at - b.at);
}

/**
 * The earliest future window occurrence not taken by any of the destinations; `taken` holds
 * `"<window id>|<local date>"` of live queued posts on those destinations.
 */
export function nextFreeSlot(
  windows: QueueWindowRow[],
  timeZone: string,
  now: number,
  taken: Set<string>,
): QueueSlot | null {
  if (windows.length === 0) return null;
  let date = DateTime.fromMillis(now, { zone: timeZone }).startOf("day");
  for (let i = 0; i < HORIZON_DAYS; i++, date = date.plus({ days: 1 })) {
    for (const slot of slotsOnDate(windows, date.toISODate()!, timeZone)) {
      if (slot.at > now && !taken.has(`${slot.windowId}|${slot.localDate}`)) return slot;
    }
  }
  return null;
}

/** Today's date in a zone, `YYYY-MM-DD`. */
export function localDateOf(ms: number, timeZone: string): string {
  return DateTime.fromMillis(ms, { zone: timeZone }).toISODate()!;
}

/** PUT /queue: replaces the windows with an audit record, in one transaction. */
export async function putQueueWindows(args: {
  h: Herald;
  actor: Actor;
  workspaceId: string;
  windows: { weekday: number; local_time: string }[];
}): Promise<QueueWindowRow[]> {
  const { h, actor, workspaceId, windows } = args;
  checkDistinctWindows(windows);
  return inTransaction(h.db, async (tx) => {
    const result = await replaceQueueWindows(tx, workspaceId, windows);
    await recordAudit(
      tx,
      auditActorOf(actor),
      { action: "queue.updated", workspaceId, targetType: "queue", targetId: workspaceId },
      h.clock.now(),
    );
    return result;
  });
}

/** A queue has at most one window per weekday and local time (422 naming the repeat). */
export function checkDistinctWindows(windows: { weekday: number; local_time: string }[]): void {
  const seen = new Set<string>();
  windows.forEach((w, i) => {
    const key = `${w.weekday}|${w.local_time}`;
    if (seen.has(key)) throw invalid(`/windows/${i}`, "repeats another window");
    seen.add(key);
  });
}

/**
 * The queue slot for posts on these destinations: the earliest future window occurrence (on
 * `localDate` only, when given) that no live post on any of the destinations holds. A post being
 * moved (`exceptPostId`) does not block its own slot. Null when there is none.
 */
export async function findFreeQueueSlot(
  db: Db,
  args: {
    workspaceId: string;
    destinationIds: string[];
    timeZone: string;
    now: number;
    localDate?: string;
    exceptPostId?: string;
  },
): Promise<QueueSlot | null> {
  const { workspaceId, timeZone, now, localDate, exceptPostId } = args;
  const held = await takenQueueSlots(db, workspaceId, args.destinationIds, LIVE_STATES);
  const taken = new Set(
    held.filter((s) => s.postId !== exceptPostId).map((s) => `${s.windowId}|${s.localDate}`),
  );
  const windows = await listQueueWindows(db, workspaceId);
  if (localDate === undefined) return nextFreeSlot(windows, timeZone, now, taken);
  return (
    slotsOnDate(windows, localDate, timeZone).find(
      (s) => s.at > now && !taken.has(`${s.windowId}|${s.localDate}`),
    ) ?? null
  );
}
