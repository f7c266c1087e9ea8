import { and, eq, isNull, lt } from "drizzle-orm";
import type { BatchDelete } from "../../db/batch-delete.ts";
import type { Db } from "../../db/open.ts";
import { firstRow } from "../../db/engine.ts";
import { tablesOf, type Tables } from "../../db/tables.ts";
import { forgetCredentials } from "../keys/credential-cache.ts";

/** A client that registered, or whose metadata document was read. */
export type OauthClientRow = Tables["oauthClients"]["$inferSelect"];
/** An authorization code waiting for (or past) its exchange. */
export type AuthorizationCodeRow = Tables["oauthAuthorizationCodes"]["$inferSelect"];
/** A grant: a row of api_keys of kind `oauth_grant`. */
export type GrantRow = Tables["apiKeys"]["$inferSelect"];

export async function insertOauthClient(db: Db, row: OauthClientRow): Promise<void> {
  await db.insert(tablesOf(db).oauthClients).values(row);
}

export async function findOauthClient(db: Db, id: string): Promise<OauthClientRow | undefined> {
  const { oauthClients } = tablesOf(db);
  return db.select().from(oauthClients).where(eq(oauthClients.id, id)).then(firstRow);
}

/** Stores what a client's metadata document said (read again once stale). */
export async function saveMetadataClient(db: Db, row: OauthClientRow): Promise<void> {
  const { oauthClients } = tablesOf(db);
  const found = await findOauthClient(db, row.id);
  if (!found) await db.insert(oauthClients).values(row);
  else
    await db
      .update(oauthClients)
      .set({
        clientName: row.clientName,
        redirectUris: row.redirectUris,
        grantTypes: row.grantTypes,
        clientUri: row.clientUri,
        fetchedAt: row.fetchedAt,
      })
      .where(eq(oauthClients.id, row.id));
}

export async function insertAuthorizationCode(db: Db, row: AuthorizationCodeRow): Promise<void> {
  await db.insert(tablesOf(db).oauthAuthorizationCodes).values(row);
}

export async function findAuthorizationCode(
  db: Db,
  codeHash: string,
): Promise<AuthorizationCodeRow | undefined> {
  const { oauthAuthorizationCodes: codes } = tablesOf(db);
  return db.select().from(codes).where(eq(codes.codeHash, codeHash)).then(firstRow);
}

/** Marks a code used by the exchange that made `grantId`; false when another exchange used it first. */
export async function consumeAuthorizationCode(
  db: Db,
  codeHash: string,
  grantId: string,
  at: number,
): Promise<boolean> {
  const { oauthAuthorizationCodes: codes } = tablesOf(db);
  const changed = await db
    .update(codes)
    .set({ usedAt: at, grantId })
    .where(and(eq(codes.codeHash, codeHash), isNull(codes.usedAt)))
    .returning({ codeHash: codes.codeHash });
  return changed.length === 1;
}

/** A refresh token with the grant it belongs to. */
export async function findRefreshToken(
  db: Db,
  tokenHash: string,
): Promise<{ token: Tables["oauthRefreshTokens"]["$inferSelect"]; grant: GrantRow } | undefined> {
  const { oauthRefreshTokens: tokens, apiKeys } = tablesOf(db);
  return db
    .select({ token: tokens, grant: apiKeys })
    .from(tokens)
    .innerJoin(apiKeys, eq(apiKeys.id, tokens.grantId))
    .where(eq(tokens.tokenHash, tokenHash))
    .then(firstRow);
}

export async function insertRefreshToken(
  db: Db,
  tokenHash: string,
  grantId: string,
  at: number,
): Promise<void> {
  await db
    .insert(tablesOf(db).oauthRefreshTokens)
    .values({ tokenHash, grantId, createdAt: at, rotatedAt: null });
}

/** Marks a refresh token exchanged for the next; false when it was already (a reuse). */
export async function rotateRefreshToken(db: Db, tokenHash: string, at: number): Promise<boolean> {
  const { oauthRefreshTokens: tokens } = tablesOf(db);
  const changed = await db
    .update(tokens)
    .set({ rotatedAt: at })
    .where(and(eq(tokens.tokenHash, tokenHash), isNull(tokens.rotatedAt)))
    .returning({ tokenHash: tokens.tokenHash });
  return changed.length === 1;
}

/** Gives a grant its new access token: the previous one is refused from the commit on. */
export async function replaceGrantAccessToken(
  db: Db,
  grantId: string,
  token: { secretHash: string; prefix: string; accessExpiresAt: number },
): Promise<void> {
  const { apiKeys } = tablesOf(db);
  await db.update(apiKeys).set(token).where(eq(apiKeys.id, grantId));
  forgetCredentials(db);
}

/** Authorization codes past their expiry before `before` (retention: a code is done with by then). */
export function expiredAuthorizationCodes(db: Db, before: number): BatchDelete {
  const { oauthAuthorizationCodes: t } = tablesOf(db);
  return { table: t, key: [t.codeHash], where: lt(t.expiresAt, before), oldestFirst: t.expiresAt };
}

/**
 * Refresh tokens rotated before `before`: kept while a reuse could still be caught (the grant's
 * lifetime), then deleted. A grant's live token is never rotated, so it stays.
 */
export function rotatedRefreshTokens(db: Db, before: number): BatchDelete {
  const { oauthRefreshTokens: t } = tablesOf(db);
  return { table: t, key: [t.tokenHash], where: lt(t.rotatedAt, before), oldestFirst: t.rotatedAt };
}
