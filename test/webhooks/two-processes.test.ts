// Two servers on one PostgreSQL database claim outbox work side by side: every event is fanned out
// once and every queued e-mail (the other outbox) is sent once. PostgreSQL only: on SQLite two
// servers in one process would deadlock (a blocked BEGIN IMMEDIATE waits synchronously for a lock
// that only this same thread can release); separate processes serialize on the file lock instead.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { loadConfig } from "../../src/config.ts";
import { engineOf } from "../../src/db/engine.ts";
import { newId } from "../../src/db/ids.ts";
import { tables } from "../helpers/tables.ts";
import { inTransaction } from "../../src/db/transaction.ts";
import type { Herald } from "../../src/herald.ts";
import { createMemoryLogger } from "../../src/lib/logger.ts";
import { deliverDueMail, enqueueMail } from "../../src/modules/mail/outbox.ts";
import type { MailTransport } from "../../src/modules/mail/transport.ts";
import { dispatchWebhookEvents } from "../../src/modules/webhooks/dispatcher.ts";
import { openHerald } from "../../src/server.ts";
import { POSTGRES_URL } from "../helpers/database.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { count, mustCreateEndpoint } from "./helpers.ts";

const { eventsOutbox } = tables;

const sent: string[] = [];
const mail: MailTransport = {
  async send(message) {
    await Bun.sleep(2); // long enough for the other server to try the same message
    sent.push(message.to);
  },
};

let s: TestServer;
let other: Herald;
beforeAll(async () => {
  if (!POSTGRES_URL) return;
  s = await startTestServer({ mail, env: { HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1" } });
  const first = s.herald.config;
  const config = loadConfig({
    HERALD_DATA_DIR: s.dataDir,
    HERALD_PORT: "0",
    HERALD_DATABASE_URL: first.databaseUrl!,
    HERALD_SECRET_KEY: first.secretKey!,
  });
  other = await openHerald(config, { clock: s.clock, logger: createMemoryLogger(), mail });
});
afterAll(async () => {
  if (!POSTGRES_URL) return;
  await engineOf(other.db).close();
  await s.stop();
});

test.skipIf(!POSTGRES_URL)("each event is fanned out once by dispatchers running side by side", async () => {
  await mustCreateEndpoint(s, { url: "http://127.0.0.1:9/a" });
  await mustCreateEndpoint(s, { url: "http://127.0.0.1:9/b" });
  const events = 1_200; // more than two batches each
  await inTransaction(s.herald.db, async (tx) => {
    for (let i = 0; i < events; i++) {
      await tx.insert(eventsOutbox).values({
        id: newId("evt"),
        workspaceId: s.owner.workspaceId,
        type: "post.published",
        postId: null,
        destinationId: null,
        createdAt: s.clock.now(),
        dispatchedAt: null,
        payload: { id: newId("send"), object: "post", n: i },
      });
    }
  });
  const created = await Promise.all([
    dispatchWebhookEvents(s.herald),
    dispatchWebhookEvents(other),
    dispatchWebhookEvents(s.herald),
    dispatchWebhookEvents(other),
  ]);
  expect(created.reduce((a, b) => a + b, 0)).toBe(2 * events);
  expect(await count(s.herald, "webhook_deliveries")).toBe(2 * events);
  expect(await count(s.herald, "events_outbox", "dispatched_at IS NULL")).toBe(0);
});

test.skipIf(!POSTGRES_URL)("each queued e-mail is sent once by mail jobs running side by side", async () => {
  const messages = 60;
  await inTransaction(s.herald.db, async (tx) => {
    for (let i = 0; i < messages; i++)
      await enqueueMail(
        s.herald,
        tx,
        { to: `user${i}@example.com`, subject: "Hello", text: "Hi" },
        s.clock.now(),
      );
  });
  const runs = await Promise.all(
    [s.herald, other, s.herald, other, s.herald, other].map((h) => deliverDueMail(h, 100)),
  );
  expect(runs.reduce((a, b) => a + b, 0)).toBe(messages);
  expect(sent).toHaveLength(messages);
  expect(new Set(sent).size).toBe(messages);
  expect(await count(s.herald, "mail_outbox", "status = 'sent'")).toBe(messages);
});
