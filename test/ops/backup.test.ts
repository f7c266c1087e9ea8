// `herald backup` while a `herald serve` process takes writes (posts, asset uploads, asset
// deletions), then `herald restore` into a new directory and a server on it: every write acknowledged
// before the backup started is there, with its bytes, and the database passes integrity_check.
// SQLite only (on PostgreSQL see backup-pg.test.ts). About 6 s.
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { POSTGRES_URL } from "../helpers/database.ts";
import { bootstrapCli, startHerald, tempDataDir, type HeraldProcess } from "../posts/engine-helpers.ts";
import { LOAD_ENV, expectRestoredServer, herald, remoteServer, startWriteLoad } from "./helpers.ts";

const work = mkdtempSync(join(tmpdir(), "herald-backup-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe.skipIf(POSTGRES_URL !== null)("herald backup and restore (SQLite)", () => {
  test("an online backup under write load restores every acknowledged row and blob", async () => {
    const data = await tempDataDir();
    const servers: HeraldProcess[] = [];
    try {
      const { workspaceId: ws, apiKey } = await bootstrapCli(data);
      const source = await startHerald(data, LOAD_ENV);
      servers.push(source);
      const load = startWriteLoad(
        remoteServer(() => source.url, apiKey),
        ws,
      );
      await Bun.sleep(1500);

      const out = join(work, "load.tar");
      const backupStartedAt = Date.now();
      const backup = await herald(["backup", "--out", out, "--with-secret-key", "--json"], data.env);
      expect({ code: backup.code, stderr: backup.stderr }).toEqual({ code: 0, stderr: "" });
      await Bun.sleep(300); // writes go on after the backup too
      await load.stop();
      await source.kill("SIGTERM");
      const summary = JSON.parse(backup.stdout);

      const target = { HERALD_DATA_DIR: join(work, "restored") };
      const restored = await herald(["restore", out, "--json"], target);
      expect({ code: restored.code, stderr: restored.stderr }).toEqual({ code: 0, stderr: "" });
      expect(JSON.parse(restored.stdout)).toMatchObject({ dialect: "sqlite", secret_key_restored: true });
      expect(readFileSync(join(target.HERALD_DATA_DIR, "secret.key"), "utf8")).toBe(
        readFileSync(join(data.dir, "secret.key"), "utf8"),
      );
      const db = new Database(join(target.HERALD_DATA_DIR, "herald.db"), { readonly: true });
      expect(db.query("PRAGMA integrity_check").all()).toEqual([{ integrity_check: "ok" }]);
      db.close();

      const checked = await expectRestoredServer({
        env: target,
        servers,
        apiKey,
        ws,
        acks: load.acks,
        startedAt: backupStartedAt,
      });
      expect(checked.posts).toBeGreaterThan(20);
      expect(checked.assets).toBeGreaterThan(3);
      expect(summary.blobs).toBeGreaterThan(0);
    } finally {
      for (const server of servers) await server.kill();
      await data.cleanup();
    }
  }, 60_000);

  test("restore refuses a non-empty directory, a damaged or truncated file, and a wrong key", async () => {
    const data = await tempDataDir();
    try {
      await bootstrapCli(data);
      const out = join(work, "plain.tar");
      expect((await herald(["backup", "--out", out], data.env)).code).toBe(0);
      const again = await herald(["backup", "--out", out], data.env);
      expect({ code: again.code, stderr: again.stderr }).toMatchObject({
        code: 1,
        stderr: expect.stringMatching(/exists/),
      });

      const fresh = (name: string) => ({ HERALD_DATA_DIR: join(work, name) });
      const noKey = await herald(["restore", out], fresh("no-key"));
      expect(noKey).toMatchObject({
        code: 1,
        stderr: expect.stringMatching(/no secret key: set HERALD_SECRET_KEY/),
      });
      const wrongKey = { ...fresh("wrong-key"), HERALD_SECRET_KEY: "x".repeat(40) };
      expect(await herald(["restore", out], wrongKey)).toMatchObject({
        code: 1,
        stderr: expect.stringMatching(/not the key the backup was made with/),
      });
      const key = readFileSync(join(data.dir, "secret.key"), "utf8").trim();
      const nonEmpty = fresh("non-empty");
      rmSync(nonEmpty.HERALD_DATA_DIR, { recursive: true, force: true });
      mkdirSync(nonEmpty.HERALD_DATA_DIR);
      writeFileSync(join(nonEmpty.HERALD_DATA_DIR, "keep.txt"), "mine");
      expect(await herald(["restore", out], { ...nonEmpty, HERALD_SECRET_KEY: key })).toMatchObject({
        code: 1,
        stderr: expect.stringMatching(/is not empty/),
      });
      expect(readFileSync(join(nonEmpty.HERALD_DATA_DIR, "keep.txt"), "utf8")).toBe("mine");

      // A flipped byte inside the database entry: the SHA-256 check refuses it and leaves the dir empty.
      const damaged = join(work, "damaged.tar");
      const bytes = readFileSync(out);
      bytes[4096] = bytes[4096]! ^ 0xff;
      writeFileSync(damaged, bytes);
      const target = { ...fresh("damaged"), HERALD_SECRET_KEY: key };
      expect(await herald(["restore", damaged], target)).toMatchObject({
        code: 1,
        stderr: expect.stringMatching(/does not match its SHA-256/),
      });
      expect(readdirSync(target.HERALD_DATA_DIR)).toEqual([]);
      const truncated = join(work, "truncated.tar");
      writeFileSync(truncated, readFileSync(out));
      truncateSync(truncated, 20_000);
      expect(
        await herald(["restore", truncated], { ...fresh("truncated"), HERALD_SECRET_KEY: key }),
      ).toMatchObject({
        code: 1,
        stderr: expect.stringMatching(/truncated/),
      });
      const ok = await herald(["restore", out], { ...fresh("ok"), HERALD_SECRET_KEY: key });
      expect(ok).toMatchObject({ code: 0, stderr: "" });
    } finally {
      await data.cleanup();
    }
  }, 30_000);

  test("restore refuses a backup of a database a newer Herald migrated, before writing anything", async () => {
    const data = await tempDataDir();
    try {
      await bootstrapCli(data);
      // What a newer binary's migrate step would have recorded (backup copies the file as it is).
      const db = new Database(join(data.dir, "herald.db"));
      db.run("INSERT INTO herald_migrations (tag, hash, applied_at) VALUES ('9999_future', 'newer', 0)");
      db.close();
      const out = join(work, "newer.tar");
      expect((await herald(["backup", "--out", out, "--with-secret-key"], data.env)).code).toBe(0);
      const target = { HERALD_DATA_DIR: join(work, "newer-target") };
      const refused = await herald(["restore", out], target);
      expect(refused).toMatchObject({
        code: 1,
        stderr: expect.stringMatching(
          /migration 9999_future, which this binary \(Herald [^)]+\) does not know/,
        ),
      });
      const dir = target.HERALD_DATA_DIR;
      expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
    } finally {
      await data.cleanup();
    }
  }, 30_000);
});
