import { randomBytes } from "node:crypto";
import { newId } from "../../db/ids.ts";
import type { Db } from "../../db/open.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { auditActorOf, type Actor } from "../../core/actor.ts";
import { invalid, notFound, ProblemError } from "../../core/problem.ts";
import { checkPublicOrigin } from "../../lib/network-guard.ts";
import { createPkcePair } from "../../providers/pkce.ts";
import { ProviderError, type ConnectedAccount } from "../../providers/types.ts";
import { recordAudit, type AuditActor } from "../audit/repo.ts";
import { findWorkspaceById } from "../workspaces/repo.ts";
import { countLivePostsOnDestination } from "../posts/repo.ts";
import { LIVE_STATES } from "../posts/states.ts";
import {
  clearOtherDefaults, findConnection, findConnectionByState, findDestination, findDestinationByExternalId, findOAuthApp,
  insertConnection, insertDestination, insertOAuthApp, takeConnectionState, updateConnection, updateDestination, type ConnectionRow, type DestinationRow,
} from "./repo.ts";

/** How long a pending OAuth connection waits for the user. */
export const CONNECTION_TTL_MS = 15 * 60 * 1000;
const BLUESKY_DEFAULT_ORIGIN = "https://bsky.social";

async function checkedOrigin(h: Herald, raw: string | undefined, fallback: string | null, pointer: string): Promise<string> {
  const value = raw ?? fallback;
  if (!value) throw invalid(pointer, "is required for this provider");
  const check = await checkPublicOrigin(value, { allowPrivateNetwork: h.config.devAllowPrivateNetwork });
  if (!check.ok) throw invalid(pointer, check.detail);
  const url = new URL(value);
  if (url.pathname !== "/" || url.search || url.hash) throw invalid(pointer, "must be an origin only, like https://mastodon.social");
  return url.origin;
}

/** The problem a provider failure during connection becomes. */
function connectionProblem(error: unknown, pointer: string): ProblemError {
  if (error instanceof ProviderError) {
    if (error.kind === "auth_revoked" || error.kind === "auth_expired" || error.kind === "rejected") {
      return new ProblemError("public_unpublishable", `The network refused the credentials: ${error.message}`, { errors: [{ pointer, code: "custom", detail: error.message }] });
    }
    return new ProblemError("public_provider_error", `The network did not answer properly (${error.operation}): ${error.message}`, { retryAfter: 30 });
  }
  throw error;
}

/** Stores a connected account as a destination (or refreshes the existing one for the same account). */
function saveDestination(h: Herald, tx: Db, actor: AuditActor, workspaceId: string, channel: string, origin: string, account: ConnectedAccount): DestinationRow {
  const now = h.clock.now();
  const sealed = h.secrets.encrypt(JSON.stringify(account.credentials));
  const existing = findDestinationByExternalId(tx, workspaceId, channel, origin, account.externalId);
  const fields = {
    displayName: account.displayName || account.handle,
    handle: account.handle,
    profileImageUrl: account.profileImageUrl,
    credentialsSealed: sealed,
    limits: account.limits as unknown as Record<string, number>,
    unavailableReason: null,
    updatedAt: now,
  };
  let row: DestinationRow;
  if (existing) {
    updateDestination(tx, existing.id, fields);
    row = { ...existing, ...fields };
  } else {
    row = { id: newId("dest"), workspaceId, channel, externalId: account.externalId, origin, enabled: true, isDefault: false, createdAt: now, deletedAt: null, ...fields };
    insertDestination(tx, row);
  }
  recordAudit(tx, actor, { action: existing ? "destination.reconnected" : "destination.connected", workspaceId, targetType: "destination", targetId: row.id }, now);
  return row;
}

/** Input of POST …/destination-connections. */
export interface ConnectionInput {
  provider: string;
  instance_origin?: string;
  handle?: string;
  app_password?: string;
}

/**
 * Starts connecting an account. Bluesky (handle + app password) completes at once; Mastodon
 * registers Herald on the instance (once per instance) and returns the URL to authorize at.
 */
export async function startConnection(args: {
  h: Herald;
  actor: Actor;
  workspaceId: string;
  input: ConnectionInput;
}): Promise<ConnectionRow> {
  const { h, actor, workspaceId, input } = args;
  const now = h.clock.now();
  const base = { id: newId("conn"), workspaceId, provider: input.provider, credentialId: actor.credentialId, requestId: actor.requestId, createdAt: now, error: null };
  if (input.provider === "bluesky") {
    if (!input.handle) throw invalid("/handle", "is required for bluesky");
    if (!input.app_password) throw invalid("/app_password", "is required for bluesky (create an app password in Bluesky's settings)");
    const origin = await checkedOrigin(h, input.instance_origin, BLUESKY_DEFAULT_ORIGIN, "/instance_origin");
    let account: ConnectedAccount;
    try {
      account = await h.providers.bluesky.connectWithPassword({ origin, identifier: input.handle, password: input.app_password });
    } catch (error) {
      throw connectionProblem(error, "/app_password");
    }
    // The destination and its completed connection are written together.
    return inTransaction(h.db, (tx) => {
      const destination = saveDestination(h, tx, auditActorOf(actor), workspaceId, "bluesky", origin, account);
      const row: ConnectionRow = { ...base, status: "completed", origin, state: null, secretsSealed: null, authorizationUrl: null, destinationId: destination.id, expiresAt: now };
      insertConnection(tx, row);
      return row;
    });
  }
  if (input.provider === "mastodon") {
    for (const field of ["handle", "app_password"] as const) if (input[field] !== undefined) throw invalid(`/${field}`, "is only for bluesky");
    const origin = await checkedOrigin(h, input.instance_origin, null, "/instance_origin");
    const redirectUri = `${h.config.baseUrl}/oauth/callback/mastodon`;
    let app = findOAuthApp(h.db, "mastodon", origin, redirectUri);
    let clientSecret: string;
    if (app) {
      clientSecret = h.secrets.decrypt(app.clientSecretSealed);
    } else {
      try {
        const registered = await h.providers.mastodon.registerApp({ origin, redirectUri, clientName: "Herald", website: h.config.baseUrl });
        insertOAuthApp(h.db, { provider: "mastodon", origin, redirectUri, clientId: registered.clientId, clientSecretSealed: h.secrets.encrypt(registered.clientSecret), createdAt: now });
        // Two first connections racing both register; the stored app wins, with its own secret.
        app = findOAuthApp(h.db, "mastodon", origin, redirectUri)!;
        clientSecret = h.secrets.decrypt(app.clientSecretSealed);
      } catch (error) {
        throw connectionProblem(error, "/instance_origin");
      }
    }
    const state = randomBytes(24).toString("base64url");
    const { verifier, challenge } = createPkcePair();
    const authorizationUrl = h.providers.mastodon.authorizationUrl({ origin, clientId: app.clientId, redirectUri, state, codeChallenge: challenge });
    const row: ConnectionRow = {
      ...base, status: "pending", origin, state, authorizationUrl, destinationId: null, expiresAt: now + CONNECTION_TTL_MS,
      secretsSealed: h.secrets.encrypt(JSON.stringify({ verifier, clientId: app.clientId, clientSecret, redirectUri })),
    };
    insertConnection(h.db, row);
    return row;
  }
  throw new ProblemError("public_unpublishable", `Connecting ${input.provider} is not available yet; Herald connects bluesky and mastodon.`, { errors: [{ pointer: "/provider", code: "custom", detail: "is not supported yet" }] });
}

/** A connection session of the workspace, or 404. */
export function requireConnection(h: Herald, workspaceId: string, id: string): ConnectionRow {
  const row = findConnection(h.db, workspaceId, id);
  if (!row) throw notFound("destination connection");
  if (row.status === "pending" && row.expiresAt <= h.clock.now()) return { ...row, status: "expired" };
  return row;
}

/**
 * Finishes a Mastodon authorization from the OAuth return page. Returns what the page should tell
 * the user; never throws for a user-caused problem (the page shows it).
 */
export async function completeOAuthCallback(h: Herald, provider: string, query: { code?: string; state?: string; error?: string; error_description?: string }): Promise<{ ok: boolean; message: string }> {
  if (provider !== "mastodon") return { ok: false, message: "Unknown provider." };
  if (!query.state) return { ok: false, message: "The authorization response has no state; start connecting again." };
  const connection = findConnectionByState(h.db, query.state);
  const now = h.clock.now();
  if (!connection || connection.status !== "pending") return { ok: false, message: "This authorization link was already used or is unknown; start connecting again." };
  if (connection.expiresAt <= now) {
    updateConnection(h.db, connection.id, { status: "expired", secretsSealed: null });
    return { ok: false, message: "This authorization expired; start connecting again." };
  }
  if (query.error || !query.code) {
    updateConnection(h.db, connection.id, { status: "failed", secretsSealed: null, error: query.error_description ?? query.error ?? "no code" });
    return { ok: false, message: `The instance did not authorize Herald: ${query.error_description ?? query.error ?? "no code returned"}.` };
  }
  const secrets = JSON.parse(h.secrets.decrypt(connection.secretsSealed!)) as { verifier: string; clientId: string; clientSecret: string; redirectUri: string };
  // Take the session first, atomically, so a double-submitted callback (even to two processes) connects once.
  if (!takeConnectionState(h.db, connection.id, query.state)) return { ok: false, message: "This authorization link was already used; start connecting again." };
  try {
    const account = await h.providers.mastodon.completeAuthorization({ origin: connection.origin, clientId: secrets.clientId, clientSecret: secrets.clientSecret, redirectUri: secrets.redirectUri, code: query.code, codeVerifier: secrets.verifier });
    const workspace = findWorkspaceById(h.db, connection.workspaceId)!;
    const actor = { accountId: workspace.accountId, credentialId: connection.credentialId, requestId: connection.requestId };
    inTransaction(h.db, (tx) => {
      const destination = saveDestination(h, tx, actor, connection.workspaceId, "mastodon", connection.origin, account);
      updateConnection(tx, connection.id, { status: "completed", destinationId: destination.id, secretsSealed: null });
    });
    return { ok: true, message: `Connected ${account.displayName || account.handle}. You can close this window.` };
  } catch (error) {
    const message = error instanceof ProviderError ? error.message : "unexpected error";
    updateConnection(h.db, connection.id, { status: "failed", secretsSealed: null, error: message });
    if (!(error instanceof ProviderError)) h.logger.error("oauth callback failed", { connection_id: connection.id, error: (error as Error).message });
    return { ok: false, message: `Connecting failed: ${message}` };
  }
}

/** A destination of the workspace, or 404. */
export function requireDestination(h: Herald, workspaceId: string, id: string): DestinationRow {
  const row = findDestination(h.db, workspaceId, id);
  if (!row) throw notFound("destination");
  return row;
}

/** Enables/disables a destination or makes it the channel's default. */
export function patchDestination(args: {
  h: Herald;
  actor: Actor;
  workspaceId: string;
  id: string;
  input: { enabled?: boolean; is_default?: boolean };
}): DestinationRow {
  const { h, actor, workspaceId, id, input } = args;
  return inTransaction(h.db, (tx) => {
    const row = findDestination(tx, workspaceId, id);
    if (!row) throw notFound("destination");
    const now = h.clock.now();
    const changes = { enabled: input.enabled ?? row.enabled, isDefault: input.is_default ?? row.isDefault, updatedAt: now };
    updateDestination(tx, id, changes);
    if (changes.isDefault) clearOtherDefaults(tx, workspaceId, row.channel, id);
    recordAudit(tx, auditActorOf(actor), { action: "destination.updated", workspaceId, targetType: "destination", targetId: id }, now);
    return { ...row, ...changes };
  });
}

/** Disconnects a destination (its credentials are erased); refused while posts still use it. */
export function disconnectDestination(args: { h: Herald; actor: Actor; workspaceId: string; id: string }): DestinationRow {
  const { h, actor, workspaceId, id } = args;
  return inTransaction(h.db, (tx) => {
    const row = findDestination(tx, workspaceId, id);
    if (!row) throw notFound("destination");
    const live = countLivePostsOnDestination(tx, id, LIVE_STATES);
    if (live > 0) throw new ProblemError("public_conflict", `${live} post(s) waiting to publish use this destination; cancel or reschedule them first.`);
    const now = h.clock.now();
    const changes = { deletedAt: now, updatedAt: now, enabled: false, isDefault: false, credentialsSealed: h.secrets.encrypt("{}") };
    updateDestination(tx, id, changes);
    recordAudit(tx, auditActorOf(actor), { action: "destination.disconnected", workspaceId, targetType: "destination", targetId: id }, now);
    return { ...row, ...changes };
  });
}
