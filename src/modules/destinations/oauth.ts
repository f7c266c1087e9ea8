import { randomBytes } from "node:crypto";
import { newId } from "../../db/ids.ts";
import type { Herald } from "../../herald.ts";
import type { Actor } from "../../core/actor.ts";
import { ProblemError } from "../../core/problem.ts";
import { createPkcePair } from "../../providers/pkce.ts";
import { type ConnectedAccount, ProviderError, type OAuthAdapter } from "../../providers/types.ts";
import { inTransaction } from "../../db/transaction.ts";
import { findAccount } from "../account/repo.ts";
import { findWorkspaceById } from "../workspaces/repo.ts";
import {
  deleteOAuthApp,
  findConnectionByState,
  findOAuthApp,
  insertConnection,
  insertOAuthApp,
  takeConnectionState,
  updateConnection,
  type ConnectionRow,
} from "./repo.ts";
import { connectionProblem, saveDestinations } from "./save.ts";

/** How long a pending OAuth connection waits for the user. */
export const CONNECTION_TTL_MS = 15 * 60 * 1000;

/** What the OAuth session keeps, sealed, between the start and the return page. */
interface SessionSecrets {
  verifier: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
}

/** The return page of a channel: `<origin>/oauth/callback/<channel>`, the same rule for every network. */
export function redirectUriOf(h: Herald, channel: string): string {
  return `${h.config.baseUrl}/oauth/callback/${channel}`;
}

/**
 * 422 `public_provider_app_not_configured` naming the variables an operator must set before a
 * fixed-app network can be connected.
 */
function appNotConfigured(h: Herald, channel: string): ProblemError {
  const prefix = `HERALD_${channel.toUpperCase()}`;
  const missing = [`${prefix}_CLIENT_ID`, `${prefix}_CLIENT_SECRET`];
  const name = h.providers.adapter(channel)?.displayName ?? channel;
  return new ProblemError(
    "public_provider_app_not_configured",
    `Connecting ${name} needs Herald's own app on ${name}, and this server has none yet: its operator ` +
      `must set ${missing.join(" and ")} (docs/networks.md) and restart Herald.`,
    {
      errors: [{ pointer: "/provider", code: "app_not_configured", detail: `set ${missing.join(" and ")}` }],
    },
  );
}

/**
 * The app credentials to authorize with. Per-instance networks (Mastodon) register Herald once per
 * instance and redirect URI, and register again when the instance has forgotten the app (a reset);
 * fixed-app networks use HERALD_<CH>_CLIENT_ID/_SECRET.
 */
async function appCredentials(h: Herald, adapter: OAuthAdapter, origin: string, redirectUri: string) {
  const channel = adapter.channel;
  if (adapter.connection.kind === "oauth" && adapter.connection.registration === "fixed-app") {
    const app = h.providers.app(channel);
    if (!app?.clientId || !app.clientSecret) throw appNotConfigured(h, channel);
    return { clientId: app.clientId, clientSecret: app.clientSecret };
  }
  const cached = await findOAuthApp(h.db, channel, origin, redirectUri);
  if (cached) {
    const clientSecret = h.secrets.decrypt(cached.clientSecretSealed);
    if (
      !adapter.appIsKnown ||
      (await adapter.appIsKnown({ origin, clientId: cached.clientId, clientSecret }))
    ) {
      return { clientId: cached.clientId, clientSecret };
    }
    h.logger.warn("the instance no longer knows Herald's app; registering again", { channel, origin });
    const forgotten = { provider: channel, origin, redirectUri, clientId: cached.clientId };
    await inTransaction(h.db, (tx) => deleteOAuthApp(tx, forgotten));
  }
  const registered = await adapter.registerApp!({
    origin,
    redirectUri,
    clientName: "Herald",
    website: h.config.baseUrl,
  });
  const sealed = h.secrets.encrypt(registered.clientSecret);
  // Two first connections racing both register; the stored app wins, with its own secret.
  const stored = await inTransaction(h.db, async (tx) => {
    await insertOAuthApp(tx, {
      provider: channel,
      origin,
      redirectUri,
      clientId: registered.clientId,
      clientSecretSealed: sealed,
      createdAt: h.clock.now(),
    });
    return (await findOAuthApp(tx, channel, origin, redirectUri))!;
  });
  return { clientId: stored.clientId, clientSecret: h.secrets.decrypt(stored.clientSecretSealed) };
}

/**
 * Starts an OAuth connection: app credentials, a single-use `state` bound to this session and a PKCE
 * S256 pair; answers the pending session with the URL to send the user to.
 */
export async function startOAuthConnection(args: {
  h: Herald;
  actor: Actor;
  workspaceId: string;
  adapter: OAuthAdapter;
  origin: string;
}): Promise<ConnectionRow> {
  const { h, actor, workspaceId, adapter, origin } = args;
  const now = h.clock.now();
  const redirectUri = redirectUriOf(h, adapter.channel);
  let app: { clientId: string; clientSecret: string };
  try {
    app = await appCredentials(h, adapter, origin, redirectUri);
  } catch (error) {
    throw connectionProblem(error, { origin, step: { kind: "registration" } });
  }
  const state = randomBytes(24).toString("base64url");
  const { verifier, challenge } = createPkcePair();
  const authorizationUrl = adapter.authorizationUrl({
    origin,
    clientId: app.clientId,
    redirectUri,
    state,
    codeChallenge: challenge,
  });
  const secrets: SessionSecrets = {
    verifier,
    clientId: app.clientId,
    clientSecret: app.clientSecret,
    redirectUri,
  };
  const row: ConnectionRow = {
    id: newId("conn"),
    workspaceId,
    provider: adapter.channel,
    credentialId: actor.credentialId,
    requestId: actor.requestId,
    createdAt: now,
    error: null,
    status: "pending",
    origin,
    state,
    authorizationUrl,
    destinationId: null,
    expiresAt: now + CONNECTION_TTL_MS,
    secretsSealed: h.secrets.encrypt(JSON.stringify(secrets)),
  };
  await inTransaction(h.db, (tx) => insertConnection(tx, row));
  return row;
}

/** How long a person has to answer the confirmation page of a connection started with an API key. */
export const CONFIRMATION_TTL_MS = 15 * 60 * 1000;

/** Where a connection awaiting confirmation is found: its `state` is then this prefix and a new secret. */
const CONFIRMATION_PREFIX = "confirm.";

/** What a connection awaiting confirmation keeps, sealed: the accounts the network returned. */
interface AwaitingSecrets extends SessionSecrets {
  accounts: ConnectedAccount[];
}

/** The session a return page belongs to (the page may lead back to it). */
export type CallbackConnection = Pick<ConnectionRow, "id" | "workspaceId" | "credentialId" | "provider">;

function connectionRef({ id, workspaceId, credentialId, provider }: ConnectionRow): CallbackConnection {
  return { id, workspaceId, credentialId, provider };
}

/** What the OAuth return page shows. */
export type CallbackResult =
  | { kind: "done"; ok: boolean; message: string; connection?: CallbackConnection }
  /** A dashboard-started connection came back to a browser that is not signed in as the session that started it. */
  | { kind: "other_browser"; connection: CallbackConnection }
  /** An API-started connection: the person must confirm where the accounts go before they are attached. */
  | { kind: "confirm"; confirmation: string; question: ConfirmationQuestion };

/** What the confirmation page names: the accounts, and the workspace and Herald account they would join. */
export interface ConfirmationQuestion {
  channel: string;
  origin: string;
  accounts: { handle: string; displayName: string }[];
  workspaceName: string;
  accountName: string;
  expiresAt: number;
}

/**
 * Whether a connection session was started by a person in the dashboard: their actor's credential is
 * their session (`sessionActor`, ids `ses_…`), an API key's is `key_…`.
 */
export function startedInDashboard(credentialId: string | null): boolean {
  return credentialId?.startsWith("ses_") ?? false;
}

/**
 * Finishes an authorization from the return page of `channel`. Never throws for a user-caused
 * problem (the page shows it). The session's `state` is taken atomically first, so a
 * double-submitted callback (even to two processes) connects once.
 *
 * The return is bound to who started the connection, not only to `state` (which a person can be
 * tricked into completing for someone else): one started in the dashboard completes only in the
 * browser signed in with that session (`browserSessionId`); one started with an API key has no
 * browser to compare, so its accounts wait, sealed, for the person to confirm on a page naming the
 * workspace and account they would join (`confirmOAuthConnection`).
 */
export async function completeOAuthCallback(args: {
  h: Herald;
  channel: string;
  query: { code?: string; state?: string; error?: string; error_description?: string };
  browserSessionId: string | null;
}): Promise<CallbackResult> {
  const { h, channel, query } = args;
  const failed = (message: string): CallbackResult => ({ kind: "done", ok: false, message });
  const adapter = h.providers.adapter(channel);
  if (!adapter || adapter.connection.kind !== "oauth") return failed("Unknown provider.");
  if (!query.state) return failed("The authorization response has no state; start connecting again.");
  const connection = query.state.startsWith(CONFIRMATION_PREFIX)
    ? undefined
    : await findConnectionByState(h.db, query.state);
  const now = h.clock.now();
  if (!connection || connection.status !== "pending" || connection.provider !== channel)
    return failed("This authorization link was already used or is unknown; start connecting again.");
  const ref = connectionRef(connection);
  const result = (ok: boolean, message: string): CallbackResult => ({
    kind: "done",
    ok,
    message,
    connection: ref,
  });
  const dashboard = startedInDashboard(connection.credentialId);
  // Another browser changes nothing: the one that started it may still come back.
  if (dashboard && args.browserSessionId !== connection.credentialId)
    return { kind: "other_browser", connection: ref };
  if (connection.expiresAt <= now) {
    await inTransaction(h.db, (tx) =>
      updateConnection(tx, connection.id, { status: "expired", secretsSealed: null }),
    );
    return result(false, "This authorization expired; start connecting again.");
  }
  if (query.error || !query.code) {
    const reason = query.error_description ?? query.error ?? "no code";
    await inTransaction(h.db, (tx) =>
      updateConnection(tx, connection.id, { status: "failed", secretsSealed: null, error: reason }),
    );
    const why = query.error_description ?? query.error ?? "no code returned";
    return result(false, `The network did not authorize Herald: ${why}.`);
  }
  const secrets = JSON.parse(h.secrets.decrypt(connection.secretsSealed!)) as SessionSecrets;
  const state = query.state;
  if (!(await inTransaction(h.db, (tx) => takeConnectionState(tx, connection.id, state)))) {
    return result(false, "This authorization link was already used; start connecting again.");
  }
  try {
    const accounts = await exchangeCode({
      adapter: adapter as OAuthAdapter,
      connection,
      secrets,
      code: query.code,
    });
    if (!dashboard) return await awaitConfirmation(h, connection, secrets, accounts);
    await attachAccounts(h, connection, accounts);
    return result(true, `Connected ${namesOf(accounts)}. You can close this window.`);
  } catch (error) {
    const message = error instanceof ProviderError ? error.message : "unexpected error";
    await failConnection(h, connection, secrets, error, message);
    return result(false, `Connecting failed: ${message}`);
  }
}

/** The accounts' names as a person reads them. */
function namesOf(accounts: { displayName: string; handle: string }[]): string {
  return accounts.map((a) => a.displayName || a.handle).join(", ");
}

/** Exchanges the code for the accounts the person authorized. */
async function exchangeCode(args: {
  adapter: OAuthAdapter;
  connection: ConnectionRow;
  secrets: SessionSecrets;
  code: string;
}): Promise<ConnectedAccount[]> {
  const { adapter, connection, secrets, code } = args;
  const accounts = await adapter.completeAuthorization({
    origin: connection.origin,
    clientId: secrets.clientId,
    clientSecret: secrets.clientSecret,
    redirectUri: secrets.redirectUri,
    code,
    codeVerifier: secrets.verifier,
  });
  if (accounts.length === 0)
    throw new ProviderError("rejected", "the network returned no account to connect", {
      operation: "completeAuthorization",
    });
  return accounts;
}

/** Keeps the accounts sealed behind a new single-use confirmation secret; the page's question. */
async function awaitConfirmation(
  h: Herald,
  connection: ConnectionRow,
  secrets: SessionSecrets,
  accounts: ConnectedAccount[],
): Promise<CallbackResult> {
  const confirmation = CONFIRMATION_PREFIX + randomBytes(24).toString("base64url");
  const expiresAt = h.clock.now() + CONFIRMATION_TTL_MS;
  const awaiting: AwaitingSecrets = { ...secrets, accounts };
  await inTransaction(h.db, (tx) =>
    updateConnection(tx, connection.id, {
      state: confirmation,
      expiresAt,
      secretsSealed: h.secrets.encrypt(JSON.stringify(awaiting)),
    }),
  );
  return { kind: "confirm", confirmation, question: await questionOf(h, connection, accounts, expiresAt) };
}

async function questionOf(
  h: Herald,
  connection: ConnectionRow,
  accounts: ConnectedAccount[],
  expiresAt: number,
): Promise<ConfirmationQuestion> {
  const workspace = (await findWorkspaceById(h.db, connection.workspaceId))!;
  const account = await findAccount(h.db, workspace.accountId);
  return {
    channel: connection.provider,
    origin: connection.origin,
    accounts: accounts.map((a) => ({ handle: a.handle, displayName: a.displayName })),
    workspaceName: workspace.name,
    accountName: account?.name ?? workspace.accountId,
    expiresAt,
  };
}

/**
 * The answer of the confirmation page of an API-started connection (its form, CSRF-checked by the
 * caller): `attach` stores the accounts as destinations, `cancel` ends the session without them.
 */
export async function confirmOAuthConnection(args: {
  h: Herald;
  channel: string;
  confirmation: string;
  decision: "attach" | "cancel";
}): Promise<{ ok: boolean; message: string; connection?: CallbackConnection }> {
  const { h, channel, confirmation, decision } = args;
  const gone = {
    ok: false,
    message: "This confirmation was already answered or is unknown; start connecting again.",
  };
  if (!confirmation.startsWith(CONFIRMATION_PREFIX)) return gone;
  const connection = await findConnectionByState(h.db, confirmation);
  if (!connection || connection.status !== "pending" || connection.provider !== channel) return gone;
  const ref = connectionRef(connection);
  if (!(await inTransaction(h.db, (tx) => takeConnectionState(tx, connection.id, confirmation)))) return gone;
  if (connection.expiresAt <= h.clock.now()) {
    await inTransaction(h.db, (tx) =>
      updateConnection(tx, connection.id, { status: "expired", secretsSealed: null }),
    );
    return { ok: false, message: "This confirmation expired; start connecting again.", connection: ref };
  }
  if (decision === "cancel") {
    await inTransaction(h.db, (tx) =>
      updateConnection(tx, connection.id, {
        status: "failed",
        secretsSealed: null,
        error: "declined on the confirmation page",
      }),
    );
    return { ok: false, message: "Nothing was connected.", connection: ref };
  }
  const { accounts } = JSON.parse(h.secrets.decrypt(connection.secretsSealed!)) as AwaitingSecrets;
  await attachAccounts(h, connection, accounts);
  return { ok: true, message: `Connected ${namesOf(accounts)}. You can close this window.`, connection: ref };
}

/** Stores one destination per account and completes the session. */
async function attachAccounts(
  h: Herald,
  connection: ConnectionRow,
  accounts: ConnectedAccount[],
): Promise<void> {
  const workspace = (await findWorkspaceById(h.db, connection.workspaceId))!;
  const actor = {
    accountId: workspace.accountId,
    credentialId: connection.credentialId,
    requestId: connection.requestId,
  };
  await inTransaction(h.db, async (tx) => {
    const saved = await saveDestinations({
      h,
      tx,
      actor,
      workspaceId: connection.workspaceId,
      channel: connection.provider,
      origin: connection.origin,
      accounts,
    });
    await updateConnection(tx, connection.id, {
      status: "completed",
      destinationId: saved[0]!.id,
      secretsSealed: null,
    });
  });
}

/** The connection fails; an instance that forgot Herald's app (invalid_client) gets a new one next time. */
async function failConnection(
  h: Herald,
  connection: ConnectionRow,
  secrets: SessionSecrets,
  error: unknown,
  message: string,
): Promise<void> {
  const forgotten = error instanceof ProviderError && error.errorCode === "invalid_client";
  await inTransaction(h.db, async (tx) => {
    await updateConnection(tx, connection.id, { status: "failed", secretsSealed: null, error: message });
    if (!forgotten) return;
    await deleteOAuthApp(tx, {
      provider: connection.provider,
      origin: connection.origin,
      redirectUri: secrets.redirectUri,
      clientId: secrets.clientId,
    });
  });
  if (!(error instanceof ProviderError)) {
    h.logger.error("oauth callback failed", {
      connection_id: connection.id,
      error: (error as Error).message,
    });
  }
}
