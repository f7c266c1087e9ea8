// GET /health answers 503 with its reasons when the scheduler is stuck or the database does not
// answer, on SQLite and (npm run test:pg) PostgreSQL. About 5 s (one 2 s database timeout).
import { afterEach, describe, expect, setSystemTime, test } from "bun:test";
import { engineOf } from "../../src/db/engine.ts";
import { DATABASE_TIMEOUT_MS, STUCK_AFTER_BEATS } from "../../src/modules/health/health.ts";
import { FULL_BELOW_BYTES, storageReport, storageWarning } from "../../src/modules/health/storage.ts";
import { waitFor } from "../posts/engine-helpers.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let s: TestServer | null = null;
afterEach(async () => {
  setSystemTime();
  // The tests break the database handle: closing it again may fail, which is not what they test.
  await s?.stop().catch(() => {});
  s = null;
});

describe("GET /health", () => {
  test("ok with jobs run by hand; ok while the scheduler beats; 503 once it stops beating", async () => {
    s = await startTestServer();
    const manual = await s.request("GET", "/health", { key: null });
    expect(manual.status).toBe(200);
    expect(manual.body).toMatchObject({ status: "ok", reasons: [], database: "ok" });
    // The test's data directory takes writes and has room (a machine short of space: `low`, warned).
    expect(manual.body.storage).toEqual({
      state: expect.stringMatching(/^(ok|low)$/),
      writable: true,
      free_bytes: expect.any(Number),
      total_bytes: expect.any(Number),
    });
    expect(manual.body.storage.free_bytes).toBeGreaterThan(FULL_BELOW_BYTES);
    expect(manual.body.warnings).toEqual(
      manual.body.storage.state === "ok"
        ? []
        : [{ code: "storage_low", detail: expect.stringMatching(/MiB free/) }],
    );
    expect(manual.body.scheduler).toMatchObject({
      state: "manual",
      heartbeat_job: "publishing-engine",
      interval_ms: 1000,
    });

    s.server.scheduler.start();
    const beating = await waitFor("a heartbeat", async () => {
      const r = await s!.request("GET", "/health", { key: null });
      return r.body.scheduler.last_heartbeat_at !== null && r.body.scheduler.state === "ok" ? r : undefined;
    });
    expect(beating.status).toBe(200);
    expect(beating.body.scheduler.stuck_after_ms).toBe(STUCK_AFTER_BEATS * 1000);

    // The schedules stop firing; 31 s later (the wall clock moved on) the heartbeat is overdue.
    await s.server.scheduler.stop();
    setSystemTime(new Date(Date.now() + STUCK_AFTER_BEATS * 1000 + 1000));
    const stuck = await s.request("GET", "/health", { key: null });
    expect(stuck.status).toBe(503);
    expect(stuck.body.status).toBe("unavailable");
    expect(stuck.body.scheduler.state).toBe("stuck");
    expect(stuck.body.reasons).toEqual([
      {
        code: "scheduler_stuck",
        detail: expect.stringMatching(/publishing-engine job has not started for \d+ ms/),
      },
    ]);
    expect(stuck.body.database).toBe("ok");
  });

  test("503 when the database handle is closed, and /metrics says herald_database_up 0", async () => {
    s = await startTestServer();
    await engineOf(s.herald.db).close();
    const down = await s.request("GET", "/health", { key: null });
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({
      status: "unavailable",
      database: "error",
      mail_outbox_backlog: null,
      webhooks: null,
      engine: { due_unclaimed_posts: null },
    });
    expect(down.body.reasons).toEqual([{ code: "database_unreachable", detail: expect.any(String) }]);
    const metrics = await s.request("GET", "/metrics", { key: null });
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain("\nherald_database_up 0\n");
    expect(metrics.text).not.toContain("herald_posts_due ");
  });

  test("503 within the timeout when the database hangs", async () => {
    s = await startTestServer();
    const engine = engineOf(s.herald.db);
    const ping = engine.ping;
    engine.ping = () => new Promise(() => {}); // never answers
    try {
      const started = Date.now();
      const hung = await s.request("GET", "/health", { key: null });
      expect(Date.now() - started).toBeLessThan(DATABASE_TIMEOUT_MS + 1500);
      expect(hung.status).toBe(503);
      expect(hung.body.reasons).toEqual([
        { code: "database_unreachable", detail: `the database took longer than ${DATABASE_TIMEOUT_MS} ms` },
      ]);
    } finally {
      engine.ping = ping;
    }
    expect((await s.request("GET", "/health", { key: null })).status).toBe(200);
  });
});

describe("the data directory's report", () => {
  test("unused with PostgreSQL, S3 and HERALD_SECRET_KEY (no warning); unknown when it cannot be read", async () => {
    s = await startTestServer();
    const config = s.herald.config;
    const elsewhere = {
      ...config,
      databaseUrl: "postgres://herald@127.0.0.1:1/herald",
      storage: "s3" as const,
      secretKey: "k".repeat(40),
      dataDir: "/nonexistent/herald-unused",
    };
    expect(storageReport(elsewhere)).toEqual({
      state: "unused",
      writable: null,
      free_bytes: null,
      total_bytes: null,
    });
    expect(storageWarning(storageReport(elsewhere))).toBeNull();
    const missing = storageReport({ ...config, dataDir: "/nonexistent/herald-missing" });
    expect(missing.state).toBe("unknown");
    expect(storageWarning(missing)?.code).toBe("storage_unknown");
  });
});
