// A throwaway PostgreSQL cluster for `npm run bench`: started in a temp dir on 127.0.0.1 with the
// server's default durability (fsync and synchronous commit on, unlike the test suite's cluster), one
// fresh database per benchmark. Null when PostgreSQL's server binaries are not installed.
import { SQL, spawnSync } from "bun";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface BenchPostgres {
  version: string;
  /** The postmaster's process id (its CPU and its backends' are the cluster's). */
  pid: number;
  /** A new, empty database: the variables that make Herald use it. */
  freshDatabase(): Promise<Record<string, string>>;
  stop(): Promise<void>;
}

function serverBinaries(): string | null {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return null;
  const versions = readdirSync(root).sort((a, b) => Number(a) - Number(b));
  const bin = versions.length ? join(root, versions[versions.length - 1]!, "bin") : null;
  return bin && existsSync(join(bin, "initdb")) ? bin : null;
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

/** `settings`: extra `-c name=value` server settings (a profile's `shared_preload_libraries`, say). */
export async function startBenchPostgres(settings: string[] = []): Promise<BenchPostgres | null> {
  const bin = serverBinaries();
  if (!bin) return null;
  const dir = mkdtempSync(join(tmpdir(), "herald-bench-pg-"));
  // PostgreSQL refuses to run as root: run it as the `postgres` user the Debian package creates.
  const asPostgres = process.getuid?.() === 0 ? ["runuser", "-u", "postgres", "--"] : [];
  if (asPostgres.length) chownSync(dir, Number(spawnSync(["id", "-u", "postgres"]).stdout.toString()), 0);
  const run = (args: string[]) => {
    const result = spawnSync([...asPostgres, ...args], { stdout: "pipe", stderr: "pipe" });
    if (result.exitCode !== 0) throw new Error(`${args[0]} failed: ${result.stderr.toString()}`);
  };
  const port = await freePort();
  const data = join(dir, "data");
  run([join(bin, "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "--locale=C", "-E", "UTF8"]);
  const extra = settings.map((s) => ` -c ${s}`).join("");
  const options = `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c max_connections=200${extra}`;
  run([join(bin, "pg_ctl"), "-D", data, "-l", join(dir, "server.log"), "-w", "start", "-o", options]);
  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const admin = new SQL(adminUrl, { max: 1 });
  const version = String(
    ((await admin`SHOW server_version`) as { server_version: string }[])[0]!.server_version,
  );
  let counter = 0;
  const pid = Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]);
  return {
    version,
    pid,
    async freshDatabase() {
      const name = `bench_${++counter}`;
      await admin.unsafe(`CREATE DATABASE ${name}`);
      return {
        HERALD_DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/${name}`,
        HERALD_SECRET_KEY: "bench-secret-key-0123456789abcdefghijklmnopqrstuvwxyz",
      };
    },
    async stop() {
      await admin.close();
      spawnSync([...asPostgres, join(bin, "pg_ctl"), "-D", data, "-m", "fast", "stop"]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
