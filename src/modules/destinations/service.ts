import { newId } from "../../db/ids.ts";
import type { Db } from "../../db/open.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { auditActorOf, type Actor } from "../../core/actor.ts";
import { invalid, notFound, ProblemError } from "../../core/problem.ts";
import { originCheckProblem } from "../../core/origin-problem.ts";
import { checkPublicOrigin } from "../../lib/network-guard.ts";
import type {
  ConnectedAccount,
  OAuthAdapter,
  PasswordAdapter,
  ProviderAdapter,
} from "../../providers/types.ts";
import { recordAudit } from "../audit/repo.ts";
import { countLivePostsOnDestination } from "../posts/repo.ts";
import { LIVE_STATES } from "../posts/states.ts";
import {
  clearOtherDefaults,
  findConnection,
  findDestination,
  insertConnection,
  updateDestination,
  type ConnectionRow,
  type DestinationRow,
} from "./repo.ts";
import { startOAuthConnection } from "./oauth.ts";
import { connectionProblem, saveDestinations, unreachableProblem } from "./save.ts";

async function checkedOrigin(
  h: Herald,
  raw: string | undefined,
  fallback: string | null,
  pointer: string,
): Promise<string> {
  const value = raw ?? fallback;
  if (!value) throw invalid(pointer, "is required for this provider");
  const check = await checkPublicOrigin(value, { allowPrivateNetwork: h.config.devAllowPrivateNetwork });
  if (!check.ok && check.reason === "unresolvable") {
    // Said at once, like any other way to the network failing: a person fixes the name or the DNS.
    const code = /\(([A-Z_]+)\)$/.exec(check.detail)?.[1];
    throw unreachableProblem(new URL(value).host, `its name does not resolve${code ? ` (${code})` : ""}`);
  }
  if (!check.ok) throw originCheckProblem(check, pointer);
  const url = new URL(value);
  if (url.pathname !== "/" || url.search || url.hash)
    throw invalid(pointer, "must be an origin only, like https://mastodon.social");
  return url.origin;
}

/** Input of POST …/destination-connections. */
export interface ConnectionInput {
  provider: string;
  instance_origin?: string;
  handle?: string;
  app_password?: string;
}

/** Who asks to connect an account, to which workspace, with what. */
interface ConnectionRequest {
  h: Herald;
  actor: Actor;
  workspaceId: string;
  input: ConnectionInput;
}

/**
 * Starts connecting an account the way its network connects: handle + app password completes at
 * once (Bluesky); OAuth answers a pending session with the URL to authorize at (per-instance apps
 * like Mastodon register Herald on the instance first).
 */
export async function startConnection(args: ConnectionRequest): Promise<ConnectionRow> {
  const adapter = requireConnectableAdapter(args.h, args.input.provider);
  const flow = adapter.connection;
  if (flow.kind === "password")
    return connectWithPassword({
      ...args,
      adapter: adapter as PasswordAdapter,
      defaultOrigin: flow.defaultOrigin,
    });
  return startOAuth({ ...args, adapter: adapter as OAuthAdapter, registration: flow.registration });
}

/** The adapter of `provider`, or a problem that names the networks Herald does connect. */
function requireConnectableAdapter(h: Herald, provider: string): ProviderAdapter {
  const adapter = h.providers.adapter(provider);
  if (adapter) return adapter;
  const names = h.providers.adapters.map((a) => a.displayName);
  const available = new Intl.ListFormat("en", { type: "conjunction" }).format(names);
  throw new ProblemError(
    "public_unpublishable",
    `Connecting ${provider} is not available yet; Herald connects ${available}.`,
    {
      errors: [{ pointer: "/provider", code: "custom", detail: "is not supported yet" }],
    },
  );
}

/** Handle + app password: the network checks them now, and the destination is saved at once. */
async function connectWithPassword(
  args: ConnectionRequest & { adapter: PasswordAdapter; defaultOrigin: string },
): Promise<ConnectionRow> {
  const { h, input, adapter } = args;
  if (!input.handle) throw invalid("/handle", `is required for ${adapter.channel}`);
  if (!input.app_password)
    throw invalid(
      "/app_password",
      `is required for ${adapter.channel} (create an app password in its settings)`,
    );
  // Without instance_origin: the operator's HERALD_<CH>_API_BASE, else the network's own host.
  const origin =
    input.instance_origin === undefined
      ? new URL(h.providers.app(adapter.channel)?.apiBase ?? args.defaultOrigin).origin
      : await checkedOrigin(h, input.instance_origin, null, "/instance_origin");
  let account: ConnectedAccount;
  try {
    account = await adapter.connectWithPassword({
      origin,
      identifier: input.handle,
      password: input.app_password,
    });
  } catch (error) {
    throw connectionProblem(error, { origin, step: { kind: "password", pointer: "/app_password" } });
  }
  return saveCompletedConnection({ ...args, origin, account });
}

/** The destination and its completed connection, written together in one transaction. */
function saveCompletedConnection(args: {
  h: Herald;
  actor: Actor;
  workspaceId: string;
  adapter: ProviderAdapter;
  origin: string;
  account: ConnectedAccount;
}): Promise<ConnectionRow> {
  const { h, actor, workspaceId, adapter, origin, account } = args;
  const now = h.clock.now();
  return inTransaction(h.db, async (tx) => {
    const channel = adapter.channel;
    const [destination] = await saveDestinations({
      h,
      tx,
      actor: auditActorOf(actor),
      workspaceId,
      channel,
      origin,
      accounts: [account],
    });
    const row: ConnectionRow = {
      id: newId("conn"),
      workspaceId,
      provider: channel,
      credentialId: actor.credentialId,
      requestId: actor.requestId,
      createdAt: now,
      error: null,
      status: "completed",
      origin,
      state: null,
      secretsSealed: null,
      authorizationUrl: null,
      destinationId: destination!.id,
      expiresAt: now,
    };
    await insertConnection(tx, row);
    return row;
  });
}

/**
 * OAuth: refuses the password fields and an instance origin the network's app does not use, then
 * opens the pending session (per-instance networks at the checked instance, fixed apps at their API).
 */
async function startOAuth(
  args: ConnectionRequest & { adapter: OAuthAdapter; registration: "per-instance" | "fixed-app" },
): Promise<ConnectionRow> {
  const { h, actor, workspaceId, input, adapter, registration } = args;
  for (const field of ["handle", "app_password"] as const) {
    if (input[field] !== undefined)
      throw invalid(`/${field}`, "is only for networks connected with an app password (bluesky)");
  }
  const origin =
    registration === "per-instance"
      ? await checkedOrigin(h, input.instance_origin, null, "/instance_origin")
      : h.providers.app(adapter.channel)!.apiBase;
  if (registration === "fixed-app" && input.instance_origin !== undefined) {
    throw invalid("/instance_origin", `is not used for ${adapter.channel}`);
  }
  return startOAuthConnection({ h, actor, workspaceId, adapter, origin });
}

/** A connection session of the workspace, or 404. */
export async function requireConnection(h: Herald, workspaceId: string, id: string): Promise<ConnectionRow> {
  const row = await findConnection(h.db, workspaceId, id);
  if (!row) throw notFound("destination connection");
  if (row.status === "pending" && row.expiresAt <= h.clock.now()) return { ...row, status: "expired" };
  return row;
}

/** A destination of the workspace, or 404. */
export async function requireDestination(
  h: Herald,
  workspaceId: string,
  id: string,
): Promise<DestinationRow> {
  const row = await findDestination(h.db, workspaceId, id);
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
}): Promise<DestinationRow> {
  const { h, actor, workspaceId, id, input } = args;
  return inTransaction(h.db, async (tx) => {
    const row = await findDestination(tx, workspaceId, id);
    if (!row) throw notFound("destination");
    const now = h.clock.now();
    const changes = {
      enabled: input.enabled ?? row.enabled,
      isDefault: input.is_default ?? row.isDefault,
      updatedAt: now,
    };
    await updateDestination(tx, id, changes);
    if (changes.isDefault) await clearOtherDefaults(tx, workspaceId, row.channel, id);
    await recordAudit(
      tx,
      auditActorOf(actor),
      { action: "destination.updated", workspaceId, targetType: "destination", targetId: id },
      now,
    );
    return { ...row, ...changes };
  });
}

/** Disconnects a destination (its credentials are erased); refused while posts still use it. */
export function disconnectDestination(args: {
  h: Herald;
  actor: Actor;
  workspaceId: string;
  id: string;
}): Promise<DestinationRow> {
  const { h, actor, workspaceId, id } = args;
  return inTransaction(h.db, async (tx) => {
    const row = await findDestination(tx, workspaceId, id);
    if (!row) throw notFound("destination");
    const live = await countLivePostsOnDestination(tx, id, LIVE_STATES);
    if (live > 0)
      throw new ProblemError(
        "public_conflict",
        `${live} post(s) waiting to publish use this destination; cancel or reschedule them first.`,
      );
    const now = h.clock.now();
    const changes = {
      deletedAt: now,
      updatedAt: now,
      enabled: false,
      isDefault: false,
      credentialsSealed: h.secrets.encrypt("{}"),
    };
    await updateDestination(tx, id, changes);
    await recordAudit(
      tx,
      auditActorOf(actor),
      { action: "destination.disconnected", workspaceId, targetType: "destination", targetId: id },
      now,
    );
    return { ...row, ...changes };
  });
}
