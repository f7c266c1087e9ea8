import { newId } from "../../db/ids.ts";
import { iso } from "../../lib/clock.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { Db } from "../../db/open.ts";
import type { Herald } from "../../herald.ts";
import { ProblemError, notFound } from "../../core/problem.ts";
import type { Scope } from "../../core/scopes.ts";
import { recordAudit } from "../audit/repo.ts";
import { createApiKey } from "../keys/service.ts";
import { userAwaitsConfirmation } from "../signup/confirmation.ts";
import { hashToken, newSecretToken } from "../sessions/tokens.ts";
import { formatUserCode, newUserCode, normalizeUserCode } from "./codes.ts";
import {
  type CliAuthorizationRow,
  decidePending,
  deleteExpiredCliAuthorizations,
  findCliAuthorizationBySecretHash,
  findLiveCliAuthorizationByCode,
  insertCliAuthorization,
  listAccountWorkspacesOldestFirst,
  markExchanged,
  recordPoll,
} from "./repo.ts";

/** How long a CLI authorization started on its own can be approved and exchanged. */
export const CLI_AUTHORIZATION_TTL_MS = 30 * 60 * 1000;
/** Seconds between polls at the start (RFC 8628's default). */
export const CLI_POLL_INTERVAL_SECONDS = 5;
/** What each poll that comes too early adds to the interval (RFC 8628 slow_down), and the ceiling. */
const SLOW_DOWN_STEP_SECONDS = 5;
const MAX_POLL_INTERVAL_SECONDS = 60;
/** A poll this much early still counts as on time (timers and clocks are not exact). */
const POLL_TOLERANCE_MS = 250;

/**
 * The scopes of the key an approval gives the command line: what its commands use (whoami needs no
 * scope) and connecting destinations (the first five minutes connect Mastodon from the terminal),
 * and nothing else. No team, billing, audit, notification or feedback access and no workspace
 * changes: those stay with keys made for the purpose.
 */
export const CLI_KEY_SCOPES: readonly Scope[] = [
  "workspaces:read",
  "destinations:read",
  "destinations:write",
  "posts:read",
  "posts:write",
  "assets:read",
  "assets:write",
  "webhooks:read",
  "webhooks:write",
];

/** A new authorization with its one-time secrets, as returned once to the CLI. */
export interface StartedCliAuthorization {
  row: CliAuthorizationRow;
  deviceSecret: string;
  userCode: string;
}

/**
 * Starts a CLI authorization (the device flow): a device secret for the CLI (`hcd_` + 43 base62) and a
 * user code for the person, both stored as hashes only. Call inside a transaction; `expiresAt` lets a
 * signup intent give its attached authorization its own lifetime.
 */
export async function startCliAuthorization(
  db: Db,
  input: { deviceName: string; cliVersion: string | null },
  now: number,
  expiresAt = now + CLI_AUTHORIZATION_TTL_MS,
): Promise<StartedCliAuthorization> {
  await deleteExpiredCliAuthorizations(db, now - 24 * 60 * 60 * 1000, 100);
  const secret = newSecretToken("hcd_");
  // A code is unique among live authorizations (20^8 codes: a clash is rare, but it would be ambiguous).
  let userCode = newUserCode();
  while (await findLiveCliAuthorizationByCode(db, hashToken(userCode), now)) userCode = newUserCode();
  const row: CliAuthorizationRow = {
    id: newId("cla"),
    deviceSecretHash: secret.hash,
    userCodeHash: hashToken(userCode),
    deviceName: input.deviceName,
    cliVersion: input.cliVersion,
    status: "pending",
    intervalSeconds: CLI_POLL_INTERVAL_SECONDS,
    lastPolledAt: null,
    createdAt: now,
    expiresAt,
    decidedAt: null,
    accountId: null,
    userId: null,
    workspaceId: null,
    credentialId: null,
    exchangedAt: null,
  };
  await insertCliAuthorization(db, row);
  return { row, deviceSecret: secret.token, userCode };
}

/** Starts a CLI authorization on its own (POST /cli-authorizations). */
export async function createCliAuthorization(
  h: Herald,
  input: { device_name: string; cli_version?: string },
): Promise<StartedCliAuthorization> {
  const deviceName = checkedName(input.device_name, "/device_name");
  const cliVersion = input.cli_version === undefined ? null : checkedName(input.cli_version, "/cli_version");
  const now = h.clock.now();
  return inTransaction(h.db, (tx) => startCliAuthorization(tx, { deviceName, cliVersion }, now));
}

/**
 * A name-like field after the schema's length check: not blank and without control characters (it is
 * shown on pages and becomes a key's name).
 */
export function checkedName(value: string, pointer: string): string {
  if (value.trim() === "") throw invalidField(pointer, "must not be blank");
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused.
  if (/[\u0000-\u001f\u007f]/.test(value)) throw invalidField(pointer, "must not contain control characters");
  return value;
}

function invalidField(pointer: string, detail: string): ProblemError {
  return new ProblemError("public_invalid_request", `${pointer.slice(1)} ${detail}.`, {
    errors: [{ pointer, code: "custom", detail }],
  });
}

/** The start response of the contract (`sensitive: true`: it holds one-time credentials). */
export function presentCliAuthorizationStart(h: Herald, started: StartedCliAuthorization) {
  const code = formatUserCode(started.userCode);
  return {
    object: "cli_authorization" as const,
    sensitive: true as const,
    device_secret: started.deviceSecret,
    verification_uri: `${h.config.baseUrl}/device`,
    verification_uri_complete: `${h.config.baseUrl}/device?user_code=${code}`,
    expires_at: iso(started.row.expiresAt),
    interval: started.row.intervalSeconds,
  };
}

/** What a token exchange answers: still pending, or the credential (shown once). */
export type ExchangeAnswer =
  | { object: "cli_authorization"; status: "pending"; retry_after: number; expires_at: string }
  | {
      object: "cli_credential";
      status: "authorized";
      api_key: string;
      workspace_id: string;
      workspace_name: string;
      account_id: string;
    };

type Outcome =
  | { kind: "unknown" | "consumed" | "denied" | "expired" }
  | { kind: "slow_down"; interval: number }
  | { kind: "pending"; interval: number; expiresAt: number }
  | { kind: "credential"; answer: ExchangeAnswer };

/**
 * Exchanges a device secret (POST /cli-authorizations/token). While nobody has approved (or the
 * approver's address awaits confirmation) the answer is pending with `retry_after`; a poll sooner than
 * the interval is 429 and adds 5 s to the interval (RFC 8628 slow_down). Once approved, the live key
 * is made in the same transaction that marks the authorization exchanged, so it exists nowhere before
 * the CLI receives it and a second exchange is refused. Unknown secrets are 404, denied 403, expired
 * and already exchanged 409, each with its own code.
 */
export async function exchangeDeviceSecret(
  h: Herald,
  input: { deviceSecret: string; requestId: string },
): Promise<ExchangeAnswer> {
  const now = h.clock.now();
  const outcome = await inTransaction(h.db, async (tx): Promise<Outcome> => {
    const row = await findCliAuthorizationBySecretHash(tx, hashToken(input.deviceSecret));
    if (!row) return { kind: "unknown" };
    if (row.status === "exchanged") return { kind: "consumed" };
    if (row.status === "denied") return { kind: "denied" };
    if (row.expiresAt <= now) return { kind: "expired" };
    const ready = row.status === "approved" && !(await userAwaitsConfirmation(tx, row.userId!));
    if (!ready) {
      const early =
        row.lastPolledAt !== null && now - row.lastPolledAt < row.intervalSeconds * 1000 - POLL_TOLERANCE_MS;
      const interval = early
        ? Math.min(row.intervalSeconds + SLOW_DOWN_STEP_SECONDS, MAX_POLL_INTERVAL_SECONDS)
        : row.intervalSeconds;
      await recordPoll(tx, row.id, now, interval);
      return early
        ? { kind: "slow_down", interval }
        : { kind: "pending", interval, expiresAt: row.expiresAt };
    }
    return { kind: "credential", answer: await issueCliKey(tx, row, input.requestId, now) };
  });
  switch (outcome.kind) {
    case "credential":
      return outcome.answer;
    case "pending":
      return {
        object: "cli_authorization",
        status: "pending",
        retry_after: outcome.interval,
        expires_at: iso(outcome.expiresAt),
      };
    case "slow_down":
      throw new ProblemError(
        "public_rate_limited",
        `Polled sooner than the interval; wait ${outcome.interval} seconds between polls from now on.`,
        { retryAfter: outcome.interval },
      );
    case "unknown":
      throw notFound("CLI authorization for this device secret");
    case "denied":
      throw new ProblemError(
        "public_cli_authorization_denied",
        "The person signing in denied this CLI authorization. Start a new one to try again.",
      );
    case "expired":
      throw new ProblemError(
        "public_cli_authorization_expired",
        "This CLI authorization expired before it was approved. Start a new one.",
      );
    case "consumed":
      throw new ProblemError(
        "public_cli_authorization_consumed",
        "This device secret was already exchanged for a key; it works once. Start a new authorization.",
      );
  }
}

/** Makes the CLI's key for an approved authorization and marks it exchanged (inside the exchange's transaction). */
async function issueCliKey(
  db: Db,
  row: CliAuthorizationRow,
  requestId: string,
  now: number,
): Promise<ExchangeAnswer> {
  const accountId = row.accountId!;
  const workspaces = await listAccountWorkspacesOldestFirst(db, accountId);
  const workspace = workspaces.find((w) => w.id === row.workspaceId) ?? workspaces[0];
  if (!workspace) throw new Error(`account ${accountId} has no workspace for its CLI credential`);
  const key = await createApiKey(
    db,
    {
      accountId,
      name: row.deviceName,
      environment: "live",
      scopes: [...CLI_KEY_SCOPES],
      workspaceAccessMode: "all",
      workspaceIds: [],
      expiresAt: null,
    },
    now,
  );
  if (!(await markExchanged(db, row.id, key.credentialId, now)))
    throw new Error(`CLI authorization ${row.id} changed during its exchange`);
  const actor = { accountId, credentialId: null, requestId };
  await recordAudit(
    db,
    actor,
    { action: "api_key.created", targetType: "api_key", targetId: key.credentialId },
    now,
  );
  await recordAudit(
    db,
    actor,
    { action: "cli_authorization.exchanged", targetType: "cli_authorization", targetId: row.id },
    now,
  );
  return {
    object: "cli_credential",
    status: "authorized",
    api_key: key.apiKey,
    workspace_id: workspace.id,
    workspace_name: workspace.name,
    account_id: credentialAccountId(accountId),
  };
}

/**
 * The contract writes the CLI credential's account id with `acct_` (elsewhere `acc_`): the same id
 * under that prefix, so `acc_01h…` is `acct_01h…`.
 */
export function credentialAccountId(accountId: string): string {
  return accountId.replace(/^acc_/, "acct_");
}

/** An authorization a person is looking at on /device, found by the code they typed (null: none live). */
export async function findAuthorizationForCode(
  h: Herald,
  typed: string,
): Promise<CliAuthorizationRow | null> {
  const code = normalizeUserCode(typed);
  if (!code) return null;
  return (await findLiveCliAuthorizationByCode(h.db, hashToken(code), h.clock.now())) ?? null;
}

/** Who decides on /device: the signed-in person and their session (named in the audit records). */
export interface Decider {
  sessionId: string;
  userId: string;
  accountId: string;
  requestId: string | null;
}

/**
 * Approves or denies the live authorization with this user code for the signed-in person. Approval
 * names `workspaceId` (one of the account's, else its first) as the credential's workspace; the key
 * itself is made at exchange. Answers what happened: `approved`, `denied`, `unknown` (no live
 * authorization has the code) or `already_decided`.
 */
export async function decideCliAuthorization(
  h: Herald,
  input: { userCode: string; decision: "approve" | "deny"; decider: Decider; workspaceId: string | null },
): Promise<{
  result: "approved" | "denied" | "unknown" | "already_decided";
  row: CliAuthorizationRow | null;
}> {
  const code = normalizeUserCode(input.userCode);
  if (!code) return { result: "unknown", row: null };
  const now = h.clock.now();
  return inTransaction(h.db, async (tx) => {
    const row = await findLiveCliAuthorizationByCode(tx, hashToken(code), now);
    if (!row) return { result: "unknown" as const, row: null };
    if (row.status !== "pending") return { result: "already_decided" as const, row };
    const approved = await decideForAccount(tx, row, input.decision, input.decider, input.workspaceId, now);
    if (!approved) return { result: "already_decided" as const, row };
    return { result: input.decision === "approve" ? ("approved" as const) : ("denied" as const), row };
  });
}

/**
 * Records a decision on a pending authorization with its audit record (inside the caller's
 * transaction); false when it was no longer pending. The signup page approves its attached
 * authorization through this too.
 */
export async function decideForAccount(
  db: Db,
  row: CliAuthorizationRow,
  decision: "approve" | "deny",
  decider: Decider,
  workspaceId: string | null,
  now: number,
): Promise<boolean> {
  const workspaces = await listAccountWorkspacesOldestFirst(db, decider.accountId);
  const workspace = workspaces.find((w) => w.id === workspaceId) ?? workspaces[0] ?? null;
  const changed = await decidePending(db, row.id, {
    status: decision === "approve" ? "approved" : "denied",
    accountId: decider.accountId,
    userId: decider.userId,
    workspaceId: workspace?.id ?? null,
    at: now,
  });
  if (!changed) return false;
  await recordAudit(
    db,
    { accountId: decider.accountId, credentialId: decider.sessionId, requestId: decider.requestId },
    {
      action: decision === "approve" ? "cli_authorization.approved" : "cli_authorization.denied",
      targetType: "cli_authorization",
      targetId: row.id,
    },
    now,
  );
  return true;
}
