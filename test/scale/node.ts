// One `herald serve` child process of a cluster: started on a free port with its own data dir (its
// output goes to a file there), waited for until /health answers, killed with any signal.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BUN, MAIN, ROOT, cleanEnv } from "../helpers/process.ts";
import { freePort } from "../helpers/ports.ts";

/** A running (or killed) `herald serve` process. */
export interface HeraldNode {
  url: string;
  proc: ReturnType<typeof Bun.spawn>;
  /** Whether it still runs. */
  running(): boolean;
  /** Its stdout and stderr so far. */
  log(): string;
  /** Sends `signal` (default SIGKILL) unless it has exited, and waits for the exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

// Children still running when the test process exits (a timed-out test) die with it.
const live = new Set<ReturnType<typeof Bun.spawn>>();
process.on("exit", () => {
  for (const proc of live) proc.kill("SIGKILL");
});

async function healthy(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/health`)).ok;
  } catch {
    return false;
  }
}

/** Starts `bun src/main.ts serve` with `env` (plus its port, base URL and data dir) and waits for /health. */
export async function startNode(dataDir: string, env: Record<string, string>): Promise<HeraldNode> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const logPath = join(dataDir, "serve.log");
  const output = Bun.file(logPath);
  const proc = Bun.spawn([BUN, MAIN, "serve"], {
    cwd: ROOT,
    stdin: "ignore",
    stdout: output,
    stderr: output,
    env: cleanEnv({ ...env, HERALD_DATA_DIR: dataDir, HERALD_PORT: String(port), HERALD_BASE_URL: url }),
  });
  live.add(proc);
  void proc.exited.then(() => live.delete(proc));
  const running = () => proc.exitCode === null && proc.signalCode === null;
  const node: HeraldNode = {
    url,
    proc,
    running,
    log: () => {
      try {
        return readFileSync(logPath, "utf8");
      } catch {
        return "";
      }
    },
    async kill(signal = "SIGKILL") {
      if (running()) proc.kill(signal);
      await proc.exited;
    },
  };
  const deadline = Date.now() + 30_000;
  while (!(await healthy(url))) {
    if (!running() || Date.now() > deadline) {
      await node.kill();
      throw new Error(`herald serve on ${url} did not come up (exit ${proc.exitCode}):\n${node.log()}`);
    }
    await Bun.sleep(50);
  }
  return node;
}
