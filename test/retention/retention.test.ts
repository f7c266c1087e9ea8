// Retention (docs/operations.md#retention): every table that grows with every action loses its old
// rows in bounded batches, keeps its recent ones and whatever the API still shows, on both engines.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadConfig } from "../../src/config.ts";
import { newId } from "../../src/db/ids.ts";
import { inTransaction } from "../../src/db/transaction.ts";
import { applyRetention, RETENTION_RULES } from "../../src/jobs/retention.ts";
import { SQL } from "bun";
import { deleteOldestRows, oldestRowsQuery } from "../../src/db/batch-delete.ts";
import { engineOf, isPostgres } from "../../src/db/engine.ts";
import { auditRecordsBefore } from "../../src/modules/audit/repo.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { tables } from "../helpers/tables.ts";
import { count, mustCreateEndpoint } from "../webhooks/helpers.ts";

const DAY = 86_400_000;
/** Small batches, so a few rows already take several statements. */
const BATCH = 3;

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({
    env: { HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1", HERALD_RETENTION_BATCH_SIZE: String(BATCH) },
  });
});
afterAll(() => s.stop());

const rule = (id: string) => RETENTION_RULES.find((r) => r.id === id)!;
const write = (work: (tx: typeof s.herald.db) => Promise<unknown>) => inTransaction(s.herald.db, work);

async function auditRows(n: number, createdAt: number, action: string): Promise<string[]> {
  const ids = Array.from({ length: n }, () => newId("aud"));
  await write((tx) =>
    tx.insert(tables.auditRecords).values(
      ids.map((id) => ({
        id,
        accountId: s.owner.accountId,
        credentialId: null,
        action,
        workspaceId: s.owner.workspaceId,
        targetType: "workspace",
        targetId: s.owner.workspaceId,
        requestId: null,
        clientRequestId: null,
        createdAt,
      })),
    ),
  );
  return ids;
}

describe("audit records", () => {
  test("one statement deletes at most one batch, oldest first", async () => {
    const now = s.clock.now();
    await auditRows(5, now - 500 * DAY, "test.batch");
    const deleted = await write((tx) => deleteOldestRows(tx, auditRecordsBefore(tx, now - 365 * DAY), BATCH));
    expect(deleted).toBe(BATCH);
    expect(await count(s.herald, "audit_records", "action = 'test.batch'")).toBe(5 - BATCH);
    await applyRetention(s.herald, rule("audit-cleanup"));
    expect(await count(s.herald, "audit_records", "action = 'test.batch'")).toBe(0);
  });

  test("records older than a year go across batches; recent ones stay, and the API still lists them", async () => {
    const now = s.clock.now();
    await auditRows(3 * BATCH + 1, now - 366 * DAY, "test.old");
    const kept = await auditRows(2, now - 364 * DAY, "test.recent");
    const deleted = await applyRetention(s.herald, rule("audit-cleanup"));
    expect(deleted).toBe(3 * BATCH + 1);
    expect(await count(s.herald, "audit_records", "action = 'test.old'")).toBe(0);
    expect(await count(s.herald, "audit_records", "action = 'test.recent'")).toBe(2);
    const listed = await s.request("GET", "/v1/audit-records?limit=100");
    expect(listed.status).toBe(200);
    const ids = (listed.body as { data: { id: string }[] }).data.map((r) => r.id);
    for (const id of kept) expect(ids).toContain(id);
  });

  test("two cleaners at once share the work or find nothing", async () => {
    const now = s.clock.now();
    await auditRows(4 * BATCH, now - 400 * DAY, "test.twice");
    const [a, b] = await Promise.all([
      applyRetention(s.herald, rule("audit-cleanup")),
      applyRetention(s.herald, rule("audit-cleanup")),
    ]);
    expect(a + b).toBe(4 * BATCH);
    expect(await count(s.herald, "audit_records", "action = 'test.twice'")).toBe(0);
  });
});

describe("outbox, delivery log, chat messages, analytics and idempotency keys", () => {
  test("old rows go, recent and unfinished ones stay", async () => {
    const now = s.clock.now();
    const ws = s.owner.workspaceId;
    const endpoint = await mustCreateEndpoint(s, { url: "http://127.0.0.1:9/hook" });
    const draft = await s.request("POST", `/v1/workspaces/${ws}/posts`, {
      body: { when: "draft", group: "retention", posts: [{ channel: "mastodon", body: ["kept"] }] },
    });
    expect(draft.status).toBe(201);
    const postId = (draft.body as { posts: { id: string }[] }).posts[0]!.id;

    const event = (id: string, dispatchedAt: number | null) => ({
      id,
      workspaceId: ws,
      type: "post.published",
      postId,
      destinationId: null,
      payload: { id: postId },
      createdAt: dispatchedAt ?? now - 60 * DAY,
      dispatchedAt,
    });
    const delivery = (status: "pending" | "succeeded" | "failed", createdAt: number) => ({
      id: newId("dlv"),
      endpointId: endpoint.id,
      workspaceId: ws,
      eventId: newId("evt"),
      eventType: "post.published",
      eventCreatedAt: createdAt,
      payload: { id: postId },
      status,
      nextAttemptAt: status === "pending" ? now : null,
      createdAt,
    });
    const chat = (status: "pending" | "sent" | "failed", createdAt: number) => ({
      id: newId("evt"),
      workspaceId: ws,
      eventId: newId("evt"),
      eventType: "post.published",
      channelId: "C1",
      text: "published",
      status,
      attempts: 1,
      nextAttemptAt: createdAt,
      createdAt,
    });
    const snapshot = (fetchedAt: number) => ({
      id: newId("snap"),
      postId,
      workspaceId: ws,
      fetchedAt,
      providerAsOf: null,
      metrics: {},
      offered: [],
    });
    const old = now - 31 * DAY;
    await write(async (tx) => {
      await tx
        .insert(tables.eventsOutbox)
        .values([
          ...Array.from({ length: 2 * BATCH + 1 }, () => event(newId("evt"), old)),
          event("evt_recent", now - 29 * DAY),
          event("evt_waiting", null),
        ]);
      const deliveries = [
        ...Array.from({ length: 2 * BATCH }, () => delivery("succeeded", old)),
        delivery("failed", old),
        { ...delivery("pending", old), id: "dlv_pending" },
        { ...delivery("succeeded", now - DAY), id: "dlv_recent" },
      ];
      await tx.insert(tables.webhookDeliveries).values(deliveries);
      await tx
        .insert(tables.webhookDeliveryAttempts)
        .values(
          deliveries.map((d) => ({ deliveryId: d.id, number: 1, startedAt: d.createdAt, durationMs: 5 })),
        );
      await tx
        .insert(tables.chatNotifications)
        .values([
          ...Array.from({ length: BATCH + 1 }, () => chat("sent", old)),
          chat("failed", old),
          { ...chat("pending", old), id: "chat_pending" },
          { ...chat("sent", now - DAY), id: "chat_recent" },
        ]);
      await tx
        .insert(tables.analyticsSnapshots)
        .values([
          ...Array.from({ length: BATCH + 2 }, () => snapshot(now - 401 * DAY)),
          { ...snapshot(now - 399 * DAY), id: "snap_recent" },
        ]);
      await tx.insert(tables.analyticsRefreshes).values([
        { id: newId("arr"), workspaceId: ws, groupKey: "g", requestedAt: now - 2 * DAY },
        { id: "arr_recent", workspaceId: ws, groupKey: "g", requestedAt: now - 60_000 },
      ]);
      const key = (k: string, expiresAt: number) => ({
        accountId: s.owner.accountId,
        key: k,
        requestHash: "h",
        state: "completed" as const,
        createdAt: expiresAt - DAY,
        expiresAt,
      });
      await tx
        .insert(tables.idempotencyKeys)
        .values([
          ...Array.from({ length: BATCH + 1 }, (_, i) => key(`expired-${i}`, now - 1000 - i)),
          key("live", now + 1000),
        ]);
    });

    for (const r of RETENTION_RULES) await s.server.scheduler.runNow(r.id);

    const left = async (table: string, where = "1 = 1") => count(s.herald, table, where);
    expect(await left("events_outbox", `workspace_id = '${ws}'`)).toBe(2);
    expect(await left("events_outbox", "id IN ('evt_recent', 'evt_waiting')")).toBe(2);
    expect(await left("webhook_deliveries", `endpoint_id = '${endpoint.id}'`)).toBe(2);
    expect(await left("webhook_deliveries", "id IN ('dlv_pending', 'dlv_recent')")).toBe(2);
    // Attempts go with their delivery.
    expect(await left("webhook_delivery_attempts")).toBe(2);
    expect(await left("chat_notifications")).toBe(2);
    expect(await left("chat_notifications", "id IN ('chat_pending', 'chat_recent')")).toBe(2);
    expect(await left("analytics_snapshots")).toBe(1);
    expect(await left("analytics_snapshots", "id = 'snap_recent'")).toBe(1);
    expect(await left("analytics_refreshes")).toBe(1);
    expect(await left("analytics_refreshes", "id = 'arr_recent'")).toBe(1);
    expect(await left("idempotency_keys", "key LIKE 'expired-%'")).toBe(0);
    expect(await left("idempotency_keys", "key = 'live'")).toBe(1);

    // What the API shows is untouched: the recent delivery in the log, the post itself.
    const log = await s.request("GET", `/v1/workspaces/${ws}/webhook-endpoints/${endpoint.id}/deliveries`);
    expect(log.status).toBe(200);
    const logged = (log.body as { data: { id: string }[] }).data.map((d) => d.id).sort();
    expect(logged).toEqual(["dlv_pending", "dlv_recent"]);
    expect((await s.request("GET", `/v1/workspaces/${ws}/posts/${postId}`)).status).toBe(200);
  });
});

test("each batch walks its table's time index: no scan of the table, no sort of every old row", async () => {
  // PostgreSQL: sequential scans, bitmap scans and sorts priced out; an index must give the order.
  const pg = isPostgres(s.herald.db) ? new SQL(s.herald.config.databaseUrl!, { max: 1 }) : null;
  try {
    await pg?.unsafe("SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_sort = off");
    for (const r of RETENTION_RULES) {
      const { sql, params } = oldestRowsQuery(s.herald.db, r.batch(s.herald.db, s.clock.now()), 1000).toSQL();
      const plan = pg
        ? ((await pg.unsafe(`EXPLAIN ${sql}`, params as never[])) as { "QUERY PLAN": string }[]).map(
            (row) => row["QUERY PLAN"],
          )
        : (await engineOf(s.herald.db).query<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, params)).map(
            (row) => row.detail,
          );
      const text = plan.join("\n");
      const unindexed = pg ? /Seq Scan|Bitmap Heap Scan|\bSort\b/ : /\bSCAN \w+(?! USING)|TEMP B-TREE/;
      expect({ job: r.id, plan: text, unindexed: unindexed.test(text) }).toEqual({
        job: r.id,
        plan: text,
        unindexed: false,
      });
      expect(text).toMatch(pg ? /Index (Only )?Scan using/ : /SEARCH \w+ USING (COVERING )?INDEX/);
    }
  } finally {
    await pg?.close();
  }
});

describe("settings", () => {
  test("defaults, overrides, and 0 keeping audit and analytics for ever", () => {
    const defaults = loadConfig({}).retention;
    expect(defaults).toEqual({
      eventsMs: 30 * DAY,
      deliveriesMs: 30 * DAY,
      auditMs: 365 * DAY,
      analyticsSnapshotsMs: 400 * DAY,
      batchSize: 1000,
    });
    const set = loadConfig({ HERALD_RETENTION_AUDIT_DAYS: "0", HERALD_RETENTION_EVENTS_DAYS: "7" }).retention;
    expect(set.auditMs).toBe(0);
    expect(set.eventsMs).toBe(7 * DAY);
    expect(() => loadConfig({ HERALD_RETENTION_EVENTS_DAYS: "0" })).toThrow(
      "HERALD_RETENTION_EVENTS_DAYS must be an integer from 1 to 3650",
    );
  });

  test("an audit span of 0 deletes nothing", async () => {
    await auditRows(2, s.clock.now() - 5000 * DAY, "test.forever");
    const keepAll = {
      ...s.herald,
      config: { ...s.herald.config, retention: { ...s.herald.config.retention, auditMs: 0 } },
    };
    expect(await applyRetention(keepAll, rule("audit-cleanup"))).toBe(0);
    expect(await count(s.herald, "audit_records", "action = 'test.forever'")).toBe(2);
  });
});
