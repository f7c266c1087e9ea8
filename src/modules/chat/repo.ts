import { and, asc, eq, inArray, isNull, lt, lte, ne } from "drizzle-orm";
import type { BatchDelete } from "../../db/batch-delete.ts";
import { countAll, skipLocked } from "../../db/dialect.ts";
import { firstRow } from "../../db/engine.ts";
import type { Db } from "../../db/open.ts";
import { tablesOf, type Tables } from "../../db/tables.ts";

/** A workspace's stored settings. */
export type ChatSettingsRow = Tables["chatNotificationSettings"]["$inferSelect"];
/** One Slack message to post. */
export type ChatNotificationRow = Tables["chatNotifications"]["$inferSelect"];

export async function findChatSettings(db: Db, workspaceId: string): Promise<ChatSettingsRow | undefined> {
  const { chatNotificationSettings } = tablesOf(db);
  return db
    .select()
    .from(chatNotificationSettings)
    .where(eq(chatNotificationSettings.workspaceId, workspaceId))
    .then(firstRow);
}

/** Stores a workspace's settings whole (insert or replace). */
export async function saveChatSettings(db: Db, row: ChatSettingsRow): Promise<void> {
  const { chatNotificationSettings } = tablesOf(db);
  const { workspaceId: _, ...changes } = row;
  await db
    .insert(chatNotificationSettings)
    .values(row)
    .onConflictDoUpdate({ target: chatNotificationSettings.workspaceId, set: changes });
}

/** Records (or clears, with null) the last message Slack refused for good. */
export async function setChatLastError(
  db: Db,
  workspaceId: string,
  error: string | null,
  at: number | null,
): Promise<void> {
  const { chatNotificationSettings } = tablesOf(db);
  await db
    .update(chatNotificationSettings)
    .set({ lastError: error, lastErrorAt: at })
    .where(eq(chatNotificationSettings.workspaceId, workspaceId));
}

/** An outbox event as the chat fan-out reads it. */
export interface ChatOutboxEvent {
  id: string;
  workspaceId: string;
  type: string;
  payload: Record<string, unknown>;
  createdAt: number;
}

/** Claims up to `limit` events the chat fan-out has not looked at, oldest first (skipping locked rows). */
export async function claimChatUndispatchedEvents(db: Db, limit: number): Promise<ChatOutboxEvent[]> {
  const { eventsOutbox } = tablesOf(db);
  const query = db
    .select({
      id: eventsOutbox.id,
      workspaceId: eventsOutbox.workspaceId,
      type: eventsOutbox.type,
      payload: eventsOutbox.payload,
      createdAt: eventsOutbox.createdAt,
    })
    .from(eventsOutbox)
    .where(isNull(eventsOutbox.chatDispatchedAt))
    .orderBy(asc(eventsOutbox.id))
    .limit(limit);
  return skipLocked(db, query);
}

export async function markChatDispatched(db: Db, ids: string[], now: number): Promise<void> {
  const { eventsOutbox } = tablesOf(db);
  if (ids.length === 0) return;
  await db.update(eventsOutbox).set({ chatDispatchedAt: now }).where(inArray(eventsOutbox.id, ids));
}

/** Stores notifications; an event already turned into one for its workspace is skipped. */
export async function insertChatNotifications(db: Db, rows: ChatNotificationRow[]): Promise<void> {
  const { chatNotifications } = tablesOf(db);
  if (rows.length === 0) return;
  await db.insert(chatNotifications).values(rows).onConflictDoNothing();
}

/**
 * Claims up to `limit` due notifications: their next attempt moves to the end of `leaseMs`, so no
 * other process sends them meanwhile, and one that dies mid-send leaves them due again after it.
 */
export async function claimDueChatNotifications(
  db: Db,
  now: number,
  limit: number,
  leaseMs: number,
): Promise<ChatNotificationRow[]> {
  const { chatNotifications } = tablesOf(db);
  const query = db
    .select()
    .from(chatNotifications)
    .where(and(eq(chatNotifications.status, "pending"), lte(chatNotifications.nextAttemptAt, now)))
    .orderBy(asc(chatNotifications.nextAttemptAt), asc(chatNotifications.id))
    .limit(limit);
  const rows = await skipLocked(db, query);
  if (rows.length > 0)
    await db
      .update(chatNotifications)
      .set({ nextAttemptAt: now + leaseMs })
      .where(
        inArray(
          chatNotifications.id,
          rows.map((r) => r.id),
        ),
      );
  return rows;
}

export async function updateChatNotification(
  db: Db,
  id: string,
  changes: Partial<ChatNotificationRow>,
): Promise<void> {
  const { chatNotifications } = tablesOf(db);
  await db.update(chatNotifications).set(changes).where(eq(chatNotifications.id, id));
}

/** Chat work waiting (for /metrics): events the fan-out has not looked at, messages not yet posted. */
export async function chatBacklog(
  db: Db,
): Promise<{ undispatchedEvents: number; pendingNotifications: number }> {
  const { chatNotifications, eventsOutbox } = tablesOf(db);
  const [events] = await db
    .select({ n: countAll() })
    .from(eventsOutbox)
    .where(isNull(eventsOutbox.chatDispatchedAt));
  const [notifications] = await db
    .select({ n: countAll() })
    .from(chatNotifications)
    .where(eq(chatNotifications.status, "pending"));
  return { undispatchedEvents: events!.n, pendingNotifications: notifications!.n };
}

/**
 * Sent or failed chat messages made before `before`, oldest first (retention deletes them in batches;
 * `<>` keeps the status index out, so the time index is walked instead of every finished row sorted).
 */
export function finishedChatNotificationsBefore(db: Db, before: number): BatchDelete {
  const { chatNotifications: t } = tablesOf(db);
  const where = and(lt(t.createdAt, before), ne(t.status, "pending"));
  return { table: t, key: [t.id], where, oldestFirst: t.createdAt };
}
