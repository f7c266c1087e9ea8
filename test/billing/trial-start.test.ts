// Switching an installation's billing on: accounts made before its first start in a processor mode count
// their 14-day trial from that start, not from their creation (else they would be read-only at once);
// accounts made later count from their creation, and later starts do not move the date.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import { engineOf } from "../../src/db/engine.ts";
import { tables } from "../helpers/tables.ts";
import { inTransaction } from "../../src/db/transaction.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { markProcessorSince } from "../../src/modules/billing/repo.ts";
import { exportInstallation } from "../../src/modules/transfer/export.ts";
import { importInstallation } from "../../src/modules/transfer/import.ts";
import { markBillingStart, openHerald, resolveSecretKey } from "../../src/server.ts";
import { freshDatabase } from "../helpers/database.ts";
import { expectProblem } from "../helpers/problems.ts";
import { billing, DAY_MS, newAccount, START, startBillingServer } from "./helpers.ts";

const { billingInstallation } = tables;

// The server opened its database at START in processor_test: billing started then.
const b = await startBillingServer();
const { s } = b;
afterAll(() => b.stop());

const iso = (ms: number) => new Date(ms).toISOString();

/** Runs `check` with the server's clock moved by `ms`, then moves it back. */
async function at<T>(ms: number, check: () => Promise<T>): Promise<T> {
  s.clock.advance(ms);
  try {
    return await check();
  } finally {
    s.clock.advance(-ms);
  }
}

describe("the trial when billing is switched on", () => {
  test("an account older than billing is trialing for 14 days from the switch, then read-only", async () => {
    const old = await at(-90 * DAY_MS, () => newAccount(b));
    const now = await billing(old.s);
    expect(now).toMatchObject({ entitlement: "trialing" });
    expect(now.subscription).toMatchObject({
      status: "pending_checkout",
      trial_ends_at: iso(START + 14 * DAY_MS),
    });
    const ws = old.s.owner.workspaceId;
    const draft = { when: "draft", group: "t1", posts: [{ channel: "x", body: ["Hi"] }] };
    expect((await old.s.request("POST", `/v1/workspaces/${ws}/posts`, { body: draft })).status).toBe(201);

    await at(14 * DAY_MS + 1000, async () => {
      expect((await billing(old.s)).entitlement).toBe("read_only");
      const refused = await old.s.request("POST", `/v1/workspaces/${ws}/posts`, {
        body: { ...draft, group: "t2" },
      });
      expectProblem(refused, 402, "public_subscription_required");
      expect(refused.body.detail).toContain(`trial ended at ${iso(START + 14 * DAY_MS)}`);
    });
  });

  test("an account made after the switch counts from its own creation", async () => {
    const later = await at(3 * DAY_MS, () => newAccount(b));
    expect((await billing(later.s)).subscription.trial_ends_at).toBe(iso(START + 17 * DAY_MS));
  });

  test("a later start in a processor mode does not move the date", async () => {
    await inTransaction(s.herald.db, (tx) => markProcessorSince(tx, START + 30 * DAY_MS));
    const old = await at(-10 * DAY_MS, () => newAccount(b));
    expect((await billing(old.s)).subscription.trial_ends_at).toBe(iso(START + 14 * DAY_MS));
  });
});

describe("the billing start and other installations", () => {
  test("an import into a target that a server already started in a processor mode carries the source's", async () => {
    const work = mkdtempSync(join(tmpdir(), "herald-trial-"));
    const database = await freshDatabase();
    const file = join(work, "export.jsonl");
    try {
      await exportInstallation(s.herald, file);
      const config = loadConfig({
        ...database.env,
        HERALD_DATA_DIR: join(work, "target"),
        HERALD_SECRET_KEY: resolveSecretKey(s.herald.config),
        HERALD_BILLING_MODE: "processor_test",
        HERALD_STRIPE_SECRET_KEY: "sk_test_target",
        HERALD_STRIPE_WEBHOOK_SECRET: "whsec_target",
        HERALD_STRIPE_PRICE_MONTHLY: "price_m",
        HERALD_STRIPE_PRICE_YEARLY: "price_y",
      });
      const target = await openHerald(config, {
        clock: new ManualClock(START + 40 * DAY_MS),
        logger: createLogger({ silent: true }),
        mail: null,
      });
      try {
        await markBillingStart(target); // a `herald serve` ran on it once, 40 days later
        await importInstallation(target, file);
        const rows = await target.db.select().from(billingInstallation);
        expect(rows.map((r) => r.processorSince)).toEqual([START]);
      } finally {
        await engineOf(target.db).close();
      }
    } finally {
      await database.drop();
      rmSync(work, { recursive: true, force: true });
    }
  });
});
