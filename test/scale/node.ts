// One `herald serve` child process of a cluster: started on a free port with its own data dir (its
// output goes to a file there), waited for until /health answers, killed with any signal.
import { join } from "node:path";
import { spawnHerald, type HeraldChild } from "../helpers/process.ts";

/** A running (or killed) `herald serve` process. */
export type HeraldNode = HeraldChild;

/** Starts `bun src/main.ts serve` with `env` (plus its port, base URL and data dir) and waits for /health. */
export async function startNode(dataDir: string, env: Record<string, string>): Promise<HeraldNode> {
  const node = await spawnHerald({
    baseUrl: true,
    env: { ...env, HERALD_DATA_DIR: dataDir },
    logFile: join(dataDir, "serve.log"),
  });
  await node.waitForHealth({ timeoutMs: 30_000 });
  return node;
}
