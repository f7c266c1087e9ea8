import { newId } from "../../db/ids.ts";
import type { Db } from "../../db/open.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { auditActorOf, type Actor } from "../../core/actor.ts";
import { checkIfMatch, etagOf } from "../../core/etag.ts";
import { invalid, notFound, ProblemError } from "../../core/problem.ts";
import { recordAudit } from "../audit/repo.ts";
import { findDestination } from "../destinations/repo.ts";
import type { WorkspaceRow } from "../workspaces/repo.ts";
import { presentEndpoint, TEST_EVENT_TYPE, type WebhookEventType } from "./present.ts";
import {
  deleteEndpoint,
  failPendingDeliveries,
  findDelivery,
  findEndpoint,
  insertDelivery,
  insertEndpoint,
  updateEndpoint,
  type DeliveryRow,
  type EndpointRow,
} from "./repo.ts";
import { generateSigningSecret, lastFour } from "./signing.ts";
import { webhookTransport } from "./transport.ts";
import { requireWebhookUrl } from "./url-rules.ts";
import { wakeWebhooks } from "./wake.ts";

/** The fields of Create Webhook Endpoint. */
export interface CreateEndpointInput {
  name: string;
  url: string;
  event_types: WebhookEventType[];
  destination_filter_mode?: "all" | "selected";
  destination_ids?: string[];
  content_mode?: "metadata" | "full";
  enabled?: boolean;
}

/** The fields PATCH may change. */
export type PatchEndpointInput = Partial<CreateEndpointInput>;

/** Default overlap of a rotated-out secret. */
export const DEFAULT_PREVIOUS_SECRET_TTL_SECONDS = 24 * 60 * 60;

/** Why pending deliveries end when an endpoint is switched off by its owner. */
const DISABLED_BY_OWNER = "endpoint disabled";

async function audit(
  db: Db,
  actor: Actor,
  action: string,
  workspaceId: string,
  endpointId: string,
  now: number,
): Promise<void> {
  await recordAudit(
    db,
    auditActorOf(actor),
    { action, workspaceId, targetType: "webhook_endpoint", targetId: endpointId },
    now,
  );
}

/** 403 unless the credential may read post content: `content_mode: full` ships it to the endpoint. */
function requireContentScope(actor: Actor): void {
  if (!actor.scopes.includes("posts:read")) {
    throw new ProblemError(
      "public_scope_missing",
      "content_mode `full` sends post content to the endpoint, so it also needs the `posts:read` scope, " +
        "which the API key does not have.",
    );
  }
}

/** 400 unless every value appears once. */
function requireDistinct(values: string[], pointer: string): void {
  const seen = new Set<string>();
  values.forEach((value, i) => {
    if (seen.has(value)) throw invalid(`${pointer}/${i}`, `repeats ${value}`);
    seen.add(value);
  });
}

/**
 * The destination filter a write ends with: `selected` needs 1–100 destinations of the workspace;
 * `all` takes none (switching to `all` clears the list).
 */
async function resolveFilter(
  db: Db,
  workspaceId: string,
  mode: "all" | "selected",
  ids: string[] | undefined,
  idsGiven: boolean,
): Promise<string[]> {
  if (mode === "all") {
    if (idsGiven && ids!.length > 0)
      throw invalid("/destination_ids", "is only used when destination_filter_mode is selected");
    return [];
  }
  const list = ids ?? [];
  if (list.length === 0)
    throw invalid(
      "/destination_ids",
      "must name at least one destination when destination_filter_mode is selected",
    );
  requireDistinct(list, "/destination_ids");
  for (const [i, id] of list.entries()) {
    if (!(await findDestination(db, workspaceId, id)))
      throw invalid(`/destination_ids/${i}`, `${id} is not a destination of this workspace`);
  }
  return list;
}

function urlOptions(h: Herald) {
  return { allowPrivateNetwork: h.config.devAllowPrivateNetwork, resolve: webhookTransport(h).resolve };
}

/** An endpoint of the workspace, or 404. */
export async function requireEndpoint(db: Db, workspaceId: string, id: string): Promise<EndpointRow> {
  const row = await findEndpoint(db, workspaceId, id);
  if (!row) throw notFound("webhook endpoint");
  return row;
}

/** The endpoint's ETag: a hash of its resource. */
export function endpointEtag(row: EndpointRow, now: number): string {
  return etagOf(presentEndpoint(row, now));
}

/**
 * Registers an endpoint. Returns the row and its signing secret, which is stored only sealed and
 * is shown this once.
 */
export async function createWebhookEndpoint(args: {
  h: Herald;
  actor: Actor;
  workspace: WorkspaceRow;
  input: CreateEndpointInput;
}): Promise<{ row: EndpointRow; secret: string }> {
  const { h, actor, workspace, input } = args;
  const contentMode = input.content_mode ?? "metadata";
  if (contentMode === "full") requireContentScope(actor);
  requireDistinct(input.event_types, "/event_types");
  const mode = input.destination_filter_mode ?? "all";
  const destinationIds = await resolveFilter(
    h.db,
    workspace.id,
    mode,
    input.destination_ids,
    input.destination_ids !== undefined,
  );
  const url = await requireWebhookUrl(input.url, urlOptions(h));
  const secret = generateSigningSecret();
  const now = h.clock.now();
  const row: EndpointRow = {
    id: newId("wh"),
    workspaceId: workspace.id,
    name: input.name,
    url: url.toString(),
    enabled: input.enabled ?? true,
    eventTypes: input.event_types,
    destinationFilterMode: mode,
    destinationIds,
    contentMode,
    secretSealed: h.secrets.encrypt(secret),
    secretLastFour: lastFour(secret),
    previousSecretSealed: null,
    previousSecretExpiresAt: null,
    configVersion: 1,
    disabledReason: null,
    failingSince: null,
    createdAt: now,
    updatedAt: now,
  };
  await inTransaction(h.db, async (tx) => {
    await insertEndpoint(tx, row);
    await audit(tx, actor, "webhook_endpoint.created", workspace.id, row.id, now);
  });
  return { row, secret };
}

/**
 * Changes an endpoint; any real change bumps `config_version`. `ifMatch` (optional) guards against
 * lost updates. Switching an endpoint off ends its pending deliveries (failed; switching it on
 * again does not resend them, redelivery does).
 */
export async function patchWebhookEndpoint(args: {
  h: Herald;
  actor: Actor;
  workspaceId: string;
  endpointId: string;
  input: PatchEndpointInput;
  ifMatch: string | null;
}): Promise<EndpointRow> {
  const { h, actor, workspaceId, endpointId, input, ifMatch } = args;
  const before = await requireEndpoint(h.db, workspaceId, endpointId);
  checkIfMatch(ifMatch, endpointEtag(before, h.clock.now()), false);
  if (input.event_types) requireDistinct(input.event_types, "/event_types");
  const contentMode = input.content_mode ?? before.contentMode;
  const routing =
    input.url !== undefined ||
    input.content_mode !== undefined ||
    input.event_types !== undefined ||
    input.destination_filter_mode !== undefined ||
    input.destination_ids !== undefined;
  // Where and what full content flows may only be changed by a credential that can read it.
  if (contentMode === "full" && routing) requireContentScope(actor);
  const url =
    input.url === undefined ? undefined : (await requireWebhookUrl(input.url, urlOptions(h))).toString();

  return inTransaction(h.db, async (tx) => {
    const current = await requireEndpoint(tx, workspaceId, endpointId);
    const now = h.clock.now();
    // The URL check awaited DNS: the endpoint may have changed meanwhile; If-Match still holds for this
    // write.
    checkIfMatch(ifMatch, endpointEtag(current, now), false);
    const mode = input.destination_filter_mode ?? current.destinationFilterMode;
    const filterTouched = input.destination_filter_mode !== undefined || input.destination_ids !== undefined;
    const destinationIds = filterTouched
      ? await resolveFilter(
          tx,
          workspaceId,
          mode,
          input.destination_ids ?? (mode === "selected" ? current.destinationIds : undefined),
          input.destination_ids !== undefined,
        )
      : current.destinationIds;
    const changes: Partial<EndpointRow> = {
      name: input.name ?? current.name,
      url: url ?? current.url,
      enabled: input.enabled ?? current.enabled,
      eventTypes: input.event_types ?? current.eventTypes,
      destinationFilterMode: mode,
      destinationIds,
      contentMode,
    };
    const changed = (Object.keys(changes) as (keyof EndpointRow)[]).some(
      (k) => JSON.stringify(changes[k]) !== JSON.stringify(current[k]),
    );
    if (!changed) return current;
    if (changes.enabled && !current.enabled) {
      changes.disabledReason = null;
      changes.failingSince = null;
    }
    if (!changes.enabled && current.enabled) {
      changes.disabledReason = null;
      await failPendingDeliveries(tx, current.id, now, DISABLED_BY_OWNER);
    }
    const next = { ...current, ...changes, configVersion: current.configVersion + 1, updatedAt: now };
    await updateEndpoint(tx, current.id, { ...changes, configVersion: next.configVersion, updatedAt: now });
    await audit(tx, actor, "webhook_endpoint.updated", workspaceId, current.id, now);
    return next;
  });
}

/** Deletes an endpoint with its delivery log; pending deliveries are never sent. */
export function deleteWebhookEndpoint(args: {
  h: Herald;
  actor: Actor;
  workspaceId: string;
  endpointId: string;
  ifMatch: string | null;
}): Promise<EndpointRow> {
  const { h, actor, workspaceId, endpointId, ifMatch } = args;
  return inTransaction(h.db, async (tx) => {
    const current = await requireEndpoint(tx, workspaceId, endpointId);
    const now = h.clock.now();
    checkIfMatch(ifMatch, endpointEtag(current, now), false);
    await deleteEndpoint(tx, current.id);
    await audit(tx, actor, "webhook_endpoint.deleted", workspaceId, current.id, now);
    return current;
  });
}

/**
 * Replaces the signing secret. The one it replaces keeps signing (a second `v1`) until
 * `previous_secret_expires_at`, `ttlSeconds` from now (0 ends it at once); a secret rotated out
 * earlier is dropped. Returns the new secret, shown this once.
 */
export function rotateWebhookSecret(args: {
  h: Herald;
  actor: Actor;
  workspaceId: string;
  endpointId: string;
  ttlSeconds: number;
}): Promise<{ row: EndpointRow; secret: string }> {
  const { h, actor, workspaceId, endpointId, ttlSeconds } = args;
  const secret = generateSigningSecret();
  return inTransaction(h.db, async (tx) => {
    const current = await requireEndpoint(tx, workspaceId, endpointId);
    const now = h.clock.now();
    const changes = {
      secretSealed: h.secrets.encrypt(secret),
      secretLastFour: lastFour(secret),
      previousSecretSealed: ttlSeconds > 0 ? current.secretSealed : null,
      previousSecretExpiresAt: ttlSeconds > 0 ? now + ttlSeconds * 1000 : null,
      configVersion: current.configVersion + 1,
      updatedAt: now,
    };
    await updateEndpoint(tx, current.id, changes);
    await audit(tx, actor, "webhook_endpoint.secret_rotated", workspaceId, current.id, now);
    return { row: { ...current, ...changes }, secret };
  });
}

/**
 * The secrets that sign now: the current one, and the previous one while its overlap lasts. `open`
 * unseals a stored secret (the sender opens each once per claimed batch).
 */
export function activeSecrets(row: EndpointRow, now: number, open: (sealed: string) => string): string[] {
  const secrets = [open(row.secretSealed)];
  if (row.previousSecretSealed && row.previousSecretExpiresAt !== null && row.previousSecretExpiresAt > now) {
    secrets.push(open(row.previousSecretSealed));
  }
  return secrets;
}

function requireEnabled(row: EndpointRow, what: string): void {
  if (!row.enabled) {
    throw new ProblemError(
      "public_conflict",
      `The webhook endpoint is disabled; enable it (PATCH enabled: true) before ${what}.`,
    );
  }
}

/** A pending delivery of an event to an endpoint (`redeliveryOf` names the delivery it repeats). */
export function newDelivery(
  row: EndpointRow,
  event: { id: string; type: string; createdAt: number; payload: Record<string, unknown> },
  now: number,
  redeliveryOf: string | null,
): DeliveryRow {
  return {
    id: newId("dlv"),
    endpointId: row.id,
    workspaceId: row.workspaceId,
    eventId: event.id,
    eventType: event.type,
    eventCreatedAt: event.createdAt,
    payload: event.payload,
    status: "pending",
    attemptCount: 0,
    nextAttemptAt: now,
    lastAttemptAt: null,
    lastResponseStatus: null,
    lastError: null,
    lastDurationMs: null,
    deliveredAt: null,
    failedAt: null,
    redeliveryOf,
    createdAt: now,
  };
}

/**
 * Queues a `webhook.test` event for one endpoint, whatever its event types; `data.object` is
 * `{id, object: "webhook_endpoint"}`. The sender delivers it like any other (signed, retried).
 */
export function sendTestEvent(args: {
  h: Herald;
  actor: Actor;
  workspaceId: string;
  endpointId: string;
}): Promise<DeliveryRow> {
  const { h, actor, workspaceId, endpointId } = args;
  const queued = inTransaction(h.db, async (tx) => {
    const row = await requireEndpoint(tx, workspaceId, endpointId);
    requireEnabled(row, "sending a test event");
    const now = h.clock.now();
    const delivery = newDelivery(
      row,
      {
        id: newId("evt"),
        type: TEST_EVENT_TYPE,
        createdAt: now,
        payload: { id: row.id, object: "webhook_endpoint" },
      },
      now,
      null,
    );
    await insertDelivery(tx, delivery);
    await audit(tx, actor, "webhook_endpoint.test_sent", workspaceId, row.id, now);
    return delivery;
  });
  return wakeAfter(h, queued);
}

/** The delivery once committed, with the sender woken to send it now. */
async function wakeAfter(h: Herald, queued: Promise<DeliveryRow>): Promise<DeliveryRow> {
  const delivery = await queued;
  wakeWebhooks(h.db);
  return delivery;
}

/**
 * Sends an earlier delivery's event again as a new delivery (same event id, so receivers can
 * deduplicate; a new delivery id), due now, whatever became of the original.
 */
export function redeliverWebhook(args: {
  h: Herald;
  actor: Actor;
  workspaceId: string;
  endpointId: string;
  deliveryId: string;
}): Promise<DeliveryRow> {
  const { h, actor, workspaceId, endpointId, deliveryId } = args;
  const queued = inTransaction(h.db, async (tx) => {
    const row = await requireEndpoint(tx, workspaceId, endpointId);
    const original = await findDelivery(tx, row.id, deliveryId);
    if (!original) throw notFound("webhook delivery");
    requireEnabled(row, "redelivering");
    const now = h.clock.now();
    const delivery = newDelivery(
      row,
      {
        id: original.eventId,
        type: original.eventType,
        createdAt: original.eventCreatedAt,
        payload: original.payload,
      },
      now,
      original.id,
    );
    await insertDelivery(tx, delivery);
    await recordAudit(
      tx,
      auditActorOf(actor),
      {
        action: "webhook_delivery.redelivered",
        workspaceId,
        targetType: "webhook_delivery",
        targetId: delivery.id,
      },
      now,
    );
    return delivery;
  });
  return wakeAfter(h, queued);
}
