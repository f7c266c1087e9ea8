// A failing disk under SQLite: strace attaches to a running `herald serve` and makes every fdatasync
// fail with EIO (as a disk that cannot write does), then detaches. Posts acknowledged before the fault
// read back after it and after a restart; writes during the fault answer 503 and are never
// acknowledged; and after the fault the process keeps refusing writes (Linux may have dropped the
// pages it could not write, so a later sync that succeeds proves nothing), /health warning
// `storage_sync_failed`, until a restart reads what is really on disk.
import { expect, test } from "bun:test";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { POSTGRES_URL } from "../helpers/database.ts";
import { bootstrapCli } from "../posts/engine-helpers.ts";
import { client, logDir, serve } from "./support.ts";

const STRACE = Bun.which("strace");
const skipped =
  POSTGRES_URL !== null
    ? "SQLite's WAL only (PostgreSQL stops and recovers by itself after a failed sync)"
    : STRACE === null
      ? "strace is not installed (apt-get install strace; CI installs it)"
      : process.getuid?.() !== 0
        ? "attaching strace to a running process needs root (or ptrace_scope 0)"
        : null;
if (skipped) console.log(`[faults] sync-failure: skipped: ${skipped}`);

/** Attaches strace to every thread of `pid`, failing each fdatasync with EIO; resolves once attached. */
async function failSyncsOf(pid: number): Promise<{ detach(): Promise<void> }> {
  const tracer = Bun.spawn(
    [
      STRACE!,
      "-f",
      "-p",
      String(pid),
      "-e",
      "trace=fdatasync",
      "-e",
      "inject=fdatasync:error=EIO",
      "-o",
      "/dev/null",
    ],
    { stdout: "ignore", stderr: "pipe" },
  );
  // strace says "Process N attached with T threads" (on stderr) once it has attached to every thread.
  const reader = tracer.stderr.getReader();
  let seen = "";
  while (!/attached/.test(seen)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`strace ended before attaching: ${seen}`);
    seen += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return {
    async detach() {
      tracer.kill("SIGINT"); // strace detaches from every thread and the process runs on untraced
      await tracer.exited;
    },
  };
}

test.skipIf(skipped !== null)(
  "a failed sync of the WAL: nothing acknowledged is lost, and writes stay refused until a restart",
  async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "herald-sync-failure-")));
    const logs = logDir();
    const env = { HERALD_DATA_DIR: dir, HERALD_SQLITE_SYNC: "full" };
    let server = await serve({ env, logs });
    try {
      const { workspaceId, apiKey } = await bootstrapCli({ dir, env, cleanup: async () => {} });
      const api = client(() => server.url, apiKey);
      const create = (n: number) =>
        api(
          "POST",
          `/workspaces/${workspaceId}/posts`,
          { group: `sync-${n}`, when: "draft", posts: [{ channel: "mastodon", body: [`sync ${n}`] }] },
          { "idempotency-key": `sync-${n}` },
        );
      const acknowledged: string[] = [];
      for (let n = 0; n < 5; n++) {
        const answer = await create(n);
        expect(answer.status).toBe(201);
        acknowledged.push(answer.body.posts[0].id);
      }

      const fault = await failSyncsOf(server.proc.pid);
      const during = await create(5);
      await fault.detach();
      const after = await create(6);
      for (const answer of [during, after]) {
        expect(answer.status).toBe(503);
        expect(answer.body).toMatchObject({ status: 503, code: "public_unavailable", retryable: true });
      }
      // Reads go on; the health check says why writes do not.
      for (const id of acknowledged)
        expect((await api("GET", `/workspaces/${workspaceId}/posts/${id}`)).status).toBe(200);
      // A warning, as other storage faults are (reads still work; see src/modules/health/storage.ts).
      const health = await fetch(`${server.url}/health`);
      expect(health.status).toBe(200);
      const report = (await health.json()) as { warnings: { code: string; detail: string }[] };
      const warning = report.warnings.find((w) => w.code === "storage_sync_failed");
      expect(warning?.detail).toContain("EIO");
      expect(warning?.detail).toContain("refused until Herald is restarted");

      await server.stop();
      server = await serve({ env, logs });
      const restarted = (await (await fetch(`${server.url}/health`)).json()) as { warnings: unknown[] };
      expect(restarted.warnings).toEqual([]);
      for (const id of acknowledged)
        expect((await api("GET", `/workspaces/${workspaceId}/posts/${id}`)).status).toBe(200);
      // The same key again after the restart: created now, or replayed if the refused commit reached
      // the disk after all; either way one post, acknowledged once.
      const retried = await create(6);
      expect(retried.status).toBe(201);
      expect((await create(7)).status).toBe(201);
    } finally {
      await server.kill();
      rmSync(dir, { recursive: true, force: true });
      rmSync(logs, { recursive: true, force: true });
    }
  },
  120_000,
);
