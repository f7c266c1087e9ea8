// `herald backup` on PostgreSQL (npm run test:pg): pg_dump -Fc while a `herald serve` process takes
// writes, then `herald restore` into a new, empty database and data directory, and a server on it:
// every write acknowledged before the backup started is there, with its bytes. About 6 s.
import { SQL } from "bun";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { POSTGRES_URL, TEST_SECRET_KEY } from "../helpers/database.ts";
import { bootstrapCli, startHerald, tempDataDir, type HeraldProcess } from "../posts/engine-helpers.ts";
import { LOAD_ENV, expectRestoredServer, herald, remoteServer, startWriteLoad } from "./helpers.ts";

const work = mkdtempSync(join(tmpdir(), "herald-backup-pg-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe.skipIf(POSTGRES_URL === null)("herald backup and restore (PostgreSQL)", () => {
  test("pg_dump under write load; a restore into an empty database has every acknowledged row", async () => {
    const data = await tempDataDir();
    const admin = new SQL(POSTGRES_URL!, { max: 1 });
    const target = `herald_restore_${process.pid}`;
    const servers: HeraldProcess[] = [];
    try {
      const { workspaceId: ws, apiKey } = await bootstrapCli(data);
      const source = await startHerald(data, LOAD_ENV);
      servers.push(source);
      const load = startWriteLoad(
        remoteServer(() => source.url, apiKey),
        ws,
      );
      await Bun.sleep(1000);
      const out = join(work, "pg.tar");
      const backupStartedAt = Date.now();
      const backup = await herald(["backup", "--out", out, "--json"], data.env);
      expect({ code: backup.code, stderr: backup.stderr }).toEqual({ code: 0, stderr: "" });
      expect(JSON.parse(backup.stdout)).toMatchObject({ dialect: "postgresql", blobs_in_file: true });
      await load.stop();
      await source.kill("SIGTERM");

      await admin.unsafe(`DROP DATABASE IF EXISTS ${target} WITH (FORCE)`);
      await admin.unsafe(`CREATE DATABASE ${target}`);
      const url = new URL(POSTGRES_URL!);
      url.pathname = `/${target}`;
      const env = {
        HERALD_DATA_DIR: join(work, "restored"),
        HERALD_DATABASE_URL: url.toString(),
        HERALD_SECRET_KEY: TEST_SECRET_KEY,
      };
      const restored = await herald(["restore", out, "--json"], env);
      expect({ code: restored.code, stderr: restored.stderr }).toEqual({ code: 0, stderr: "" });
      // A second restore finds tables there and refuses.
      const again = await herald(["restore", out], { ...env, HERALD_DATA_DIR: join(work, "again") });
      expect(again).toMatchObject({ code: 1, stderr: expect.stringMatching(/target database has tables/) });

      const checked = await expectRestoredServer({
        env: env,
        servers,
        apiKey,
        ws,
        acks: load.acks,
        startedAt: backupStartedAt,
      });
      expect(checked.posts).toBeGreaterThan(10);
      expect(checked.assets).toBeGreaterThan(1);
    } finally {
      for (const server of servers) await server.kill();
      await admin.unsafe(`DROP DATABASE IF EXISTS ${target} WITH (FORCE)`).catch(() => {});
      await admin.close();
      await data.cleanup();
    }
  }, 60_000);
});
