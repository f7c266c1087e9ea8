// pg_dump and pg_restore, for backups on PostgreSQL: found on PATH, else in Debian's
// /usr/lib/postgresql/<version>/bin (the newest), else the operator is told what to install.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { BackupError } from "./format.ts";

/** The path of a PostgreSQL client program. */
export function findPgTool(name: "pg_dump" | "pg_restore"): string {
  const onPath = Bun.which(name);
  if (onPath) return onPath;
  const base = "/usr/lib/postgresql";
  const versions = existsSync(base)
    ? readdirSync(base)
        .filter((v) => existsSync(join(base, v, "bin", name)))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length > 0) return join(base, versions[0]!, "bin", name);
  throw new BackupError(
    `${name} was not found: install PostgreSQL's client programs (Debian: apt-get install ` +
      `postgresql-client, the server's major version or newer), or back up by hand: ` +
      `pg_dump -Fc "$HERALD_DATABASE_URL" > herald.pgdump, plus <HERALD_DATA_DIR>/blobs (docs/operations.md)`,
  );
}

/**
 * The connection as a client program takes it: the URL without its password, which goes in
 * PGPASSWORD (command lines are visible to every local user, the environment is not).
 */
export function pgConnection(databaseUrl: string): { dbname: string; env: Record<string, string> } {
  const url = new URL(databaseUrl);
  const password = decodeURIComponent(url.password);
  url.password = "";
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined) env[name] = value;
  if (password) env.PGPASSWORD = password;
  return { dbname: url.toString(), env };
}

/** Runs a PostgreSQL client program; a failure becomes one line with its stderr. */
export async function runPgTool(command: string[], env: Record<string, string>): Promise<void> {
  const proc = Bun.spawn(command, { stdin: "ignore", stdout: "ignore", stderr: "pipe", env });
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) {
    const name = command[0]!.split("/").pop();
    throw new BackupError(`${name} failed (exit ${code}): ${stderr.trim().split("\n").slice(-3).join(" ")}`);
  }
}
