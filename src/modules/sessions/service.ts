import { newId } from "../../db/ids.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { Db } from "../../db/open.ts";
import type { Herald } from "../../herald.ts";
import { findUserByEmail } from "../account/repo.ts";
import { recordAudit } from "../audit/repo.ts";
import {
  deleteEndedSessions,
  findLiveSession,
  insertSession,
  listLiveSessions,
  markSessionRevoked,
  revokeUserSessions,
  type SessionRow,
} from "./repo.ts";
import { hashToken, newSecretToken } from "./tokens.ts";

/** How long a page session lasts from sign-in (absolute: activity does not extend it). */
export const SESSION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** A signed-in browser, as the pages see it. */
export interface PageSession {
  id: string;
  userId: string;
  accountId: string;
  email: string;
  /** The person's role in the account: what the dashboard lets them do. */
  role: "owner" | "admin" | "member";
  accountName: string;
  expiresAt: number;
}

/**
 * Starts a session for a user; the returned token goes into the cookie and is never stored (only its
 * hash is). Call inside the transaction of the sign-in.
 */
export async function openSession(
  db: Db,
  who: { userId: string; accountId: string },
  now: number,
): Promise<{ id: string; token: string; expiresAt: number }> {
  const { token, hash } = newSecretToken();
  const id = newId("ses");
  const expiresAt = now + SESSION_TTL_MS;
  await insertSession(db, {
    id,
    tokenHash: hash,
    userId: who.userId,
    accountId: who.accountId,
    createdAt: now,
    expiresAt,
    revokedAt: null,
  });
  return { id, token, expiresAt };
}

/**
 * Signs in a person Herald has just made (setup, signup, an accepted invitation) and records how they
 * came in, with the new session as the record's credential: the first thing that session did.
 */
export async function openFirstSession(
  tx: Db,
  who: { userId: string; accountId: string; requestId: string | null },
  audited: { action: string; targetType: string; targetId: string },
  now: number,
): Promise<{ id: string; token: string; expiresAt: number }> {
  const session = await openSession(tx, { userId: who.userId, accountId: who.accountId }, now);
  await recordAudit(
    tx,
    { accountId: who.accountId, credentialId: session.id, requestId: who.requestId },
    audited,
    now,
  );
  return session;
}

/** The session a cookie's token belongs to, or null when it is unknown, revoked or expired. */
export async function currentSession(h: Herald, token: string | null): Promise<PageSession | null> {
  if (!token) return null;
  const found = await findLiveSession(h.db, hashToken(token), h.clock.now());
  if (!found) return null;
  const { session } = found;
  return {
    id: session.id,
    userId: session.userId,
    accountId: session.accountId,
    email: found.email,
    role: found.role,
    accountName: found.accountName,
    expiresAt: session.expiresAt,
  };
}

/**
 * The person's live sessions (where they are signed in), oldest first. The API has no session
 * resource: sessions are the dashboard's own, so its overview reads them here.
 */
export async function liveSessionsOf(h: Herald, userId: string): Promise<SessionRow[]> {
  return listLiveSessions(h.db, userId, h.clock.now());
}

/** Ends every session of a person (sign out everywhere, e.g. after a lost laptop); returns how many. */
export async function closeUserSessions(h: Herald, userId: string): Promise<number> {
  return inTransaction(h.db, (tx) => revokeUserSessions(tx, userId, h.clock.now()));
}

/** Ends a session (sign-out): its cookie is refused from now on. */
export async function closeSession(h: Herald, sessionId: string): Promise<void> {
  await inTransaction(h.db, (tx) => markSessionRevoked(tx, sessionId, h.clock.now()));
}

// Verified against when the address is unknown or has no password, so both failures take as long as
// a wrong password (the answer does not tell which addresses have accounts).
let dummyHash: Promise<string> | null = null;

/**
 * Checks an e-mail address and password (Argon2id, `Bun.password`) and opens a session; null when
 * either is wrong or the user has no password. Ended sessions of the user are cleared on the way.
 */
export async function signIn(
  h: Herald,
  input: { email: string; password: string },
): Promise<{ id: string; token: string; expiresAt: number } | null> {
  const user = await findUserByEmail(h.db, input.email.trim());
  if (!user || !user.passwordHash) {
    dummyHash ??= Bun.password.hash("herald: no such user", { algorithm: "argon2id" });
    await Bun.password.verify(input.password, await dummyHash).catch(() => false);
    return null;
  }
  const valid = await Bun.password.verify(input.password, user.passwordHash).catch(() => false);
  if (!valid) return null;
  const now = h.clock.now();
  return inTransaction(h.db, async (tx) => {
    await deleteEndedSessions(tx, user.id, now);
    return openSession(tx, { userId: user.id, accountId: user.accountId }, now);
  });
}
