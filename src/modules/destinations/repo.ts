import { and, desc, eq, isNull, lt, lte, ne, or } from "drizzle-orm";
import type { Db } from "../../db/open.ts";
import { destinationConnections, destinations, oauthApps } from "../../db/schema.ts";

/** A stored destination. */
export type DestinationRow = typeof destinations.$inferSelect;
/** A stored connection session. */
export type ConnectionRow = typeof destinationConnections.$inferSelect;

/** A connected (not disconnected) destination of a workspace. */
export function findDestination(db: Db, workspaceId: string, id: string): DestinationRow | undefined {
  return db
    .select()
    .from(destinations)
    .where(
      and(eq(destinations.workspaceId, workspaceId), eq(destinations.id, id), isNull(destinations.deletedAt)),
    )
    .get();
}

/** A destination by id, disconnected ones included (posts keep pointing at them). */
export function findDestinationById(db: Db, id: string): DestinationRow | undefined {
  return db.select().from(destinations).where(eq(destinations.id, id)).get();
}

/** All connected destinations of a workspace, newest first. */
export function listDestinations(db: Db, workspaceId: string): DestinationRow[] {
  return db
    .select()
    .from(destinations)
    .where(and(eq(destinations.workspaceId, workspaceId), isNull(destinations.deletedAt)))
    .orderBy(desc(destinations.id))
    .all();
}

/** The connected destination of a workspace for an account on a network (reconnecting updates it). */
export function findDestinationByExternalId(
  db: Db,
  workspaceId: string,
  channel: string,
  origin: string,
  externalId: string,
): DestinationRow | undefined {
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
    .get();
}

/** Stores a new destination. */
export function insertDestination(db: Db, row: DestinationRow): void {
  db.insert(destinations).values(row).run();
}

/** Applies changes to a destination. */
export function updateDestination(db: Db, id: string, changes: Partial<DestinationRow>): void {
  db.update(destinations).set(changes).where(eq(destinations.id, id)).run();
}

/** Clears `is_default` on the other destinations of a channel in a workspace. */
export function clearOtherDefaults(db: Db, workspaceId: string, channel: string, keepId: string): void {
  db.update(destinations)
    .set({ isDefault: false })
    .where(
      and(
        eq(destinations.workspaceId, workspaceId),
        eq(destinations.channel, channel),
        ne(destinations.id, keepId),
      ),
    )
    .run();
}

/** Stores a connection session. */
export function insertConnection(db: Db, row: ConnectionRow): void {
  db.insert(destinationConnections).values(row).run();
}

/** A connection session of a workspace. */
export function findConnection(db: Db, workspaceId: string, id: string): ConnectionRow | undefined {
  return db
    .select()
    .from(destinationConnections)
    .where(and(eq(destinationConnections.workspaceId, workspaceId), eq(destinationConnections.id, id)))
    .get();
}

/** The pending connection an OAuth callback's `state` belongs to. */
export function findConnectionByState(db: Db, state: string): ConnectionRow | undefined {
  return db.select().from(destinationConnections).where(eq(destinationConnections.state, state)).get();
}

/** Applies changes to a connection session. */
export function updateConnection(db: Db, id: string, changes: Partial<ConnectionRow>): void {
  db.update(destinationConnections).set(changes).where(eq(destinationConnections.id, id)).run();
}

/** Clears a pending session's OAuth `state` if it still has it; false when another callback took it first. */
export function takeConnectionState(db: Db, id: string, state: string): boolean {
  return (
    db
      .update(destinationConnections)
      .set({ state: null })
      .where(
        and(
          eq(destinationConnections.id, id),
          eq(destinationConnections.state, state),
          eq(destinationConnections.status, "pending"),
        ),
      )
      .returning({ id: destinationConnections.id })
      .all().length === 1
  );
}

/** Marks pending sessions past their expiry as expired. */
export function expireConnections(db: Db, now: number): void {
  db.update(destinationConnections)
    .set({ status: "expired", secretsSealed: null })
    .where(and(eq(destinationConnections.status, "pending"), lt(destinationConnections.expiresAt, now)))
    .run();
}

/** The OAuth app Herald registered on an instance for a redirect URI. */
export function findOAuthApp(db: Db, provider: string, origin: string, redirectUri: string) {
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
    .get();
}

/** Remembers an OAuth app registration. */
export function insertOAuthApp(db: Db, row: typeof oauthApps.$inferInsert): void {
  db.insert(oauthApps).values(row).onConflictDoNothing().run();
}

/**
 * Takes the refresh lease of a destination when it is free or expired; false when another process
 * holds it. Only the holder refreshes the token.
 */
export function takeRefreshLease(
  db: Db,
  input: { destinationId: string; owner: string; now: number; leaseMs: number },
): boolean {
  const free = or(
    isNull(destinations.refreshLeaseExpiresAt),
    lte(destinations.refreshLeaseExpiresAt, input.now),
  );
  return (
    db
      .update(destinations)
      .set({ refreshLeaseOwner: input.owner, refreshLeaseExpiresAt: input.now + input.leaseMs })
      .where(and(eq(destinations.id, input.destinationId), free))
      .returning({ id: destinations.id })
      .all().length === 1
  );
}

/** Gives the refresh lease back (only the holder's). */
export function releaseRefreshLease(db: Db, input: { destinationId: string; owner: string }): void {
  db.update(destinations)
    .set({ refreshLeaseOwner: null, refreshLeaseExpiresAt: null })
    .where(and(eq(destinations.id, input.destinationId), eq(destinations.refreshLeaseOwner, input.owner)))
    .run();
}

/** Forgets an OAuth app registration (the instance no longer knows it); only that client id. */
export function deleteOAuthApp(
  db: Db,
  input: { provider: string; origin: string; redirectUri: string; clientId: string },
): void {
  db.delete(oauthApps)
    .where(
      and(
        eq(oauthApps.provider, input.provider),
        eq(oauthApps.origin, input.origin),
        eq(oauthApps.redirectUri, input.redirectUri),
        eq(oauthApps.clientId, input.clientId),
      ),
    )
    .run();
}
