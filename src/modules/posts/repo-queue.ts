// The queue's posting windows of a workspace (`queue_windows`).
import { asc, eq } from "drizzle-orm";
import { newId } from "../../db/ids.ts";
import type { Db } from "../../db/open.ts";
import { tablesOf, type Tables } from "../../db/tables.ts";

/** A stored posting window. */
export type QueueWindowRow = Tables["queueWindows"]["$inferSelect"];

/** The workspace's windows, by weekday then time. */
export async function listQueueWindows(db: Db, workspaceId: string): Promise<QueueWindowRow[]> {
  const { queueWindows } = tablesOf(db);
  return db
    .select()
    .from(queueWindows)
    .where(eq(queueWindows.workspaceId, workspaceId))
    .orderBy(asc(queueWindows.weekday), asc(queueWindows.localTime));
}

/** Replaces the windows; a window that stays (same weekday and time) keeps its id. */
export async function replaceQueueWindows(
  db: Db,
  workspaceId: string,
  windows: { weekday: number; local_time: string }[],
): Promise<QueueWindowRow[]> {
  const { queueWindows } = tablesOf(db);
  const current = await listQueueWindows(db, workspaceId);
  const key = (w: { weekday: number; localTime: string }) => `${w.weekday}|${w.localTime}`;
  const wanted = new Map(windows.map((w) => [key({ weekday: w.weekday, localTime: w.local_time }), w]));
  for (const row of current)
    if (!wanted.has(key(row))) await db.delete(queueWindows).where(eq(queueWindows.id, row.id));
  const kept = new Set(current.map(key));
  for (const [k, w] of wanted) {
    if (!kept.has(k))
      await db
        .insert(queueWindows)
        .values({ id: newId("qw"), workspaceId, weekday: w.weekday, localTime: w.local_time });
  }
  return listQueueWindows(db, workspaceId);
}
