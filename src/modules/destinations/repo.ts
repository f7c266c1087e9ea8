import { and, desc, eq, inArray, isNull, lt, lte, ne, or, sql } from "drizzle-orm";
import { runPrepared } from "../../db/prepared.ts";
import type { Db } from "../../db/open.ts";
import { tablesOf, type Tables } from "../../db/tables.ts";
import { firstRow } from "../../db/engine.ts";
import { inTransaction } from "../../db/transaction.ts";

/** A stored destination. */
export type DestinationRow = Tables["destinations"]["$inferSelect"];
/** A stored connection session. */
export type ConnectionRow = Tables["destinationConnections"]["$inferSelect"];

/** A connected (not disconnected) destination of a workspace. */
export async function findDestination(
  db: Db,
  workspaceId: string,
  id: string,
): Promise<DestinationRow | undefined> {
  const { destinations } = tablesOf(db);
  // Prepared: Create Post looks up each item's destination.
  return runPrepared(
    db,
    "destination",
    (d) =>
      d
        .select()
        .from(destinations)
        .where(
          and(
            eq(destinations.workspaceId, sql.placeholder("workspaceId")),
            eq(destinations.id, sql.placeholder("id")),
            isNull(destinations.deletedAt),
          ),
        ),
    { workspaceId, id },
  ).then(firstRow);
}

/** A destination by id, disconnected ones included (posts keep pointing at them). */
export async function findDestinationById(db: Db, id: string): Promise<DestinationRow | undefined> {
  const { destinations } = tablesOf(db);
  return db.select().from(destinations).where(eq(destinations.id, id)).then(firstRow);
}

/** Connected destinations of any workspace on these channels that are not waiting for reauthorization. */
export async function listUsableDestinationsOn(db: Db, channels: string[]): Promise<DestinationRow[]> {
  const { destinations } = tablesOf(db);
  if (channels.length === 0) return [];
  return db
    .select()
    .from(destinations)
    .where(
      and(
        inArray(destinations.channel, channels),
        isNull(destinations.deletedAt),
        isNull(destinations.unavailableReason),
      ),
    );
}

/** All connected destinations of a workspace, newest first. */
export async function listDestinations(db: Db, workspaceId: string): Promise<DestinationRow[]> {
  const { destinations } = tablesOf(db);
  return db
    .select()
    .from(destinations)
    .where(and(eq(destinations.workspaceId, workspaceId), isNull(destinations.deletedAt)))
    .orderBy(desc(destinations.id));
}

/** The connected destination of a workspace for an account on a network (reconnecting updates it). */
export async function findDestinationByExternalId(
  db: Db,
  workspaceId: string,
  channel: string,
  origin: string,
  externalId: string,
): Promise<DestinationRow | undefined> {
  const { destinations } = tablesOf(db);
  return db
    .select()
    .from(destinations)
    .where(
      and(
        eq(destinations.workspaceId, workspaceId),
        eq(destinations.channel, channel),
        eq(destinations.origin, origin),
        eq(destinations.externalId, externalId),
        isNull(destinations.deletedAt),
      ),
    )
    .then(firstRow);
}

/** Stores a new destination. */
export async function insertDestination(db: Db, row: DestinationRow): Promise<void> {
  const { destinations } = tablesOf(db);
  await db.insert(destinations).values(row);
}

/** Applies changes to a destination. */
export async function updateDestination(db: Db, id: string, changes: Partial<DestinationRow>): Promise<void> {
  const { destinations } = tablesOf(db);
  await db.update(destinations).set(changes).where(eq(destinations.id, id));
}

/** Clears `is_default` on the other destinations of a channel in a workspace. */
export async function clearOtherDefaults(
  db: Db,
  workspaceId: string,
  channel: string,
  keepId: string,
): Promise<void> {
  const { destinations } = tablesOf(db);
  await db
    .update(destinations)
    .set({ isDefault: false })
    .where(
      and(
        eq(destinations.workspaceId, workspaceId),
        eq(destinations.channel, channel),
        ne(destinations.id, keepId),
      ),
    );
}

/** Stores a connection session. */
export async function insertConnection(db: Db, row: ConnectionRow): Promise<void> {
  const { destinationConnections } = tablesOf(db);
  await db.insert(destinationConnections).values(row);
}

/** A connection session of a workspace. */
export async function findConnection(
  db: Db,
  workspaceId: string,
  id: string,
): Promise<ConnectionRow | undefined> {
  const { destinationConnections } = tablesOf(db);
  return db
    .select()
    .from(destinationConnections)
    .where(and(eq(destinationConnections.workspaceId, workspaceId), eq(destinationConnections.id, id)))
    .then(firstRow);
}

/** The pending connection an OAuth callback's `state` belongs to. */
export async function findConnectionByState(db: Db, state: string): Promise<ConnectionRow | undefined> {
  const { destinationConnections } = tablesOf(db);
  return db
    .select()
    .from(destinationConnections)
    .where(eq(destinationConnections.state, state))
    .then(firstRow);
}

/** Applies changes to a connection session. */
export async function updateConnection(db: Db, id: string, changes: Partial<ConnectionRow>): Promise<void> {
  const { destinationConnections } = tablesOf(db);
  await db.update(destinationConnections).set(changes).where(eq(destinationConnections.id, id));
}

/** Clears a pending session's OAuth `state` if it still has it; false when another callback took it first. */
export async function takeConnectionState(db: Db, id: string, state: string): Promise<boolean> {
  const { destinationConnections } = tablesOf(db);
  const taken = await db
    .update(destinationConnections)
    .set({ state: null })
    .where(
      and(
        eq(destinationConnections.id, id),
        eq(destinationConnections.state, state),
        eq(destinationConnections.status, "pending"),
      ),
    )
    .returning({ id: destinationConnections.id });
  return taken.length === 1;
}

/** Marks pending sessions past their expiry as expired. */
export async function expireConnections(db: Db, now: number): Promise<void> {
  const { destinationConnections } = tablesOf(db);
  await db
    .update(destinationConnections)
    .set({ status: "expired", secretsSealed: null })
    .where(and(eq(destinationConnections.status, "pending"), lt(destinationConnections.expiresAt, now)));
}

/** The OAuth app Herald registered on an instance for a redirect URI. */
export async function findOAuthApp(db: Db, provider: string, origin: string, redirectUri: string) {
  const { oauthApps } = tablesOf(db);
  return db
    .select()
    .from(oauthApps)
    .where(
      and(
        eq(oauthApps.provider, provider),
        eq(oauthApps.origin, origin),
        eq(oauthApps.redirectUri, redirectUri),
      ),
    )
    .then(firstRow);
}

/** Remembers an OAuth app registration. */
export async function insertOAuthApp(db: Db, row: Tables["oauthApps"]["$inferInsert"]): Promise<void> {
  const { oauthApps } = tablesOf(db);
  await db.insert(oauthApps).values(row).onConflictDoNothing();
}

/**
 * Marks a usable destination `reauthorization_required`; the row when that is news, undefined when it
 * was marked already (or is gone).
 */
export async function markReauthorizationRequired(
  db: Db,
  id: string,
  now: number,
): Promise<DestinationRow | undefined> {
  const { destinations } = tablesOf(db);
  const marked = await db
    .update(destinations)
    .set({ unavailableReason: "reauthorization_required", updatedAt: now })
    .where(and(eq(destinations.id, id), isNull(destinations.unavailableReason)))
    .returning();
  return marked[0];
}

/**
 * Takes the refresh lease of a destination when it is free or expired; false when another process
 * holds it. Only the holder refreshes the token. The lease is a write of its own, so it opens its
 * transaction (joining the caller's, if any).
 */
export async function takeRefreshLease(
  db: Db,
  input: { destinationId: string; owner: string; now: number; leaseMs: number },
): Promise<boolean> {
  const { destinations } = tablesOf(db);
  const free = or(
    isNull(destinations.refreshLeaseExpiresAt),
    lte(destinations.refreshLeaseExpiresAt, input.now),
  );
  // One conditional UPDATE: whichever process's write lands first holds the lease; a concurrent
  // taker then finds the condition false (on PostgreSQL after its transaction is retried).
  const taken = await inTransaction(db, (tx) =>
    tx
      .update(destinations)
      .set({ refreshLeaseOwner: input.owner, refreshLeaseExpiresAt: input.now + input.leaseMs })
      .where(and(eq(destinations.id, input.destinationId), free))
      .returning({ id: destinations.id }),
  );
  return taken.length === 1;
}

/** Gives the refresh lease back (only the holder's; like taking it, in a transaction of its own). */
export async function releaseRefreshLease(
  db: Db,
  input: { destinationId: string; owner: string },
): Promise<void> {
  const { destinations } = tablesOf(db);
  const held = and(eq(destinations.id, input.destinationId), eq(destinations.refreshLeaseOwner, input.owner));
  await inTransaction(db, async (tx) => {
    await tx.update(destinations).set({ refreshLeaseOwner: null, refreshLeaseExpiresAt: null }).where(held);
  });
}

/** Forgets an OAuth app registration (the instance no longer knows it); only that client id. */
export async function deleteOAuthApp(
  db: Db,
  input: { provider: string; origin: string; redirectUri: string; clientId: string },
): Promise<void> {
  const { oauthApps } = tablesOf(db);
  await db
    .delete(oauthApps)
    .where(
      and(
        eq(oauthApps.provider, input.provider),
        eq(oauthApps.origin, input.origin),
        eq(oauthApps.redirectUri, input.redirectUri),
        eq(oauthApps.clientId, input.clientId),
      ),
    );
}
