// Restarting the suite's PostgreSQL server from a test: found through the server itself (its data
// directory and binaries), run as the directory's owner (PostgreSQL refuses root). Only a server on
// this machine that this user may control can be restarted; otherwise the reason is returned.
import { SQL } from "bun";
import { existsSync, statSync } from "node:fs";
import { dirname, join } from "node:path";

export type PostgresControl =
  | { restart(): Promise<number>; mode: "immediate" | "fast"; reason?: undefined }
  | { reason: string };

async function run(command: string[]): Promise<{ code: number; output: string }> {
  const proc = Bun.spawn(command, { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, output: `${out}${err}`.trim() };
}

/** How to restart the server at `url`, or why it cannot be done here. */
export async function postgresControl(url: string): Promise<PostgresControl> {
  const admin = new SQL(url, { max: 1 });
  let dataDir: string;
  let binDir: string;
  let durable: boolean;
  try {
    const [row] = await admin.unsafe(
      "SELECT current_setting('data_directory') AS data, " +
        "(SELECT setting FROM pg_config WHERE name = 'BINDIR') AS bin, " +
        "current_setting('fsync') = 'on' AND current_setting('synchronous_commit') <> 'off' AS durable",
    );
    dataDir = row.data;
    binDir = row.bin;
    durable = row.durable;
  } catch (error) {
    return { reason: `the server does not say where it runs (${(error as Error).message})` };
  } finally {
    await admin.close();
  }
  const pgCtl = join(binDir, "pg_ctl");
  if (!existsSync(dataDir) || !existsSync(pgCtl))
    return { reason: `the server is not on this machine (no ${dataDir} or ${pgCtl} here)` };
  const owner = statSync(dataDir).uid;
  const me = process.getuid?.() ?? -1;
  let as: string[] = [];
  if (owner !== me) {
    if (me !== 0) return { reason: `its data directory belongs to uid ${owner}, not to this user` };
    const name = (await run(["id", "-nu", String(owner)])).output;
    as = ["runuser", "-u", name, "--"];
  }
  // The log goes where scripts/test-postgres.sh put it (beside the data directory); the server's
  // options are kept in postmaster.opts, which `restart` reuses. A durable server is crashed
  // (`immediate`: recovery from its WAL at start); the suite's throwaway cluster runs with fsync and
  // synchronous_commit off, where a crash may drop acknowledged commits by design of those settings,
  // so it is restarted `fast` (every session cut off, nothing lost).
  const log = join(dirname(dataDir), "server.log");
  const mode = durable ? "immediate" : "fast";
  return {
    mode,
    async restart() {
      const started = Date.now();
      const r = await run([...as, pgCtl, "-D", dataDir, "-m", mode, "-w", "-l", log, "restart"]);
      if (r.code !== 0) throw new Error(`pg_ctl restart failed (${r.code}): ${r.output}`);
      return Date.now() - started;
    },
  };
}
