import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { freePort } from "./ports.ts";

/** The repository root, Bun and the CLI entry: the real program, run as a process the way a user runs it. */
export const ROOT = resolve(import.meta.dir, "../..");
export const BUN = join(ROOT, "node_modules/.bin/bun");
export const MAIN = join(ROOT, "src/main.ts");

/** The parent's environment without any HERALD_* variable, plus `extra`. */
export function cleanEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env))
    if (!name.startsWith("HERALD_") && value !== undefined) env[name] = value;
  return { ...env, ...extra };
}

/**
 * Reads a child's output stream until `pattern` appears (a code or a URL the program prints while it
 * waits); returns the first match and leaves the rest of the stream unread.
 */
export async function readUntil(
  stream: ReadableStream<Uint8Array>,
  pattern: RegExp,
): Promise<RegExpExecArray> {
  const decoder = new TextDecoder();
  const reader = stream.getReader();
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`the stream ended before ${pattern}: ${text}`);
    text += decoder.decode(value);
    const match = pattern.exec(text);
    if (match) {
      reader.releaseLock();
      return match;
    }
  }
}

/** A `herald serve` (or other Herald program) child process started by `spawnHerald`. */
export interface HeraldChild {
  proc: ReturnType<typeof Bun.spawn>;
  port: number;
  /** Its origin, http://127.0.0.1:<port>. */
  url: string;
  /** Whether it still runs. */
  running(): boolean;
  /** Its stdout so far (empty when its output goes to a log file). */
  stdout(): string;
  /** Its stderr so far (empty when its output goes to a log file). */
  stderr(): string;
  /** Its stdout and stderr so far, for failure messages. */
  log(): string;
  /** Its exit code, once it has exited and its output has been read to the end. */
  exited(): Promise<number>;
  /**
   * Polls /health until its status passes `ready` (default 2xx); if the child exits or the time runs
   * out, kills it and throws with its output.
   */
  waitForHealth(options?: {
    timeoutMs?: number;
    pollMs?: number;
    ready?: (status: number) => boolean;
  }): Promise<void>;
  /** Sends `signal` (default SIGKILL) unless it has exited, and waits for the exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** SIGTERM (a clean shutdown) and waits: the exit code. */
  stop(): Promise<number | null>;
}

// Children still running when the test process exits (a timed-out test) are killed with it.
const live = new Set<ReturnType<typeof Bun.spawn>>();
process.on("exit", () => {
  for (const proc of live) proc.kill("SIGKILL");
});

/**
 * Starts `bun [runtimeFlags] src/main.ts serve` (or `program` with `args`) with the parent's clean
 * environment, HERALD_PORT (a free port unless given) and `env`. Its output is captured in memory, or
 * written to `logFile` when given (a file survives the child and stays readable after a SIGKILL).
 */
export async function spawnHerald(
  input: {
    env?: Record<string, string>;
    /** The port to listen on; a free one when omitted (the same one again after a restart keeps the URL). */
    port?: number;
    /** Also set HERALD_BASE_URL to the child's origin. */
    baseUrl?: boolean;
    /** Flags for the Bun runtime before the entry (e.g. --max-http-header-size=...). */
    runtimeFlags?: string[];
    /** What runs instead of `bun src/main.ts` (a compiled binary, a probe script). */
    program?: string[];
    /** The program's arguments; `serve` by default. */
    args?: string[];
    cwd?: string;
    logFile?: string;
  } = {},
): Promise<HeraldChild> {
  const port = input.port ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const output = input.logFile ? Bun.file(input.logFile) : "pipe";
  const proc = Bun.spawn(
    [...(input.program ?? [BUN, ...(input.runtimeFlags ?? []), MAIN]), ...(input.args ?? ["serve"])],
    {
      cwd: input.cwd ?? ROOT,
      stdin: "ignore",
      stdout: output,
      stderr: output,
      env: cleanEnv({
        HERALD_PORT: String(port),
        ...(input.baseUrl ? { HERALD_BASE_URL: url } : {}),
        ...input.env,
      }),
    },
  );
  live.add(proc);
  const captured = { stdout: "", stderr: "" };
  const read = async (stream: ReadableStream<Uint8Array> | number | undefined, into: "stdout" | "stderr") => {
    if (!(stream instanceof ReadableStream)) return;
    const decoder = new TextDecoder();
    for await (const chunk of stream) captured[into] += decoder.decode(chunk, { stream: true });
  };
  const reading = Promise.all([read(proc.stdout, "stdout"), read(proc.stderr, "stderr")]);
  const done = proc.exited.then(async (code) => {
    live.delete(proc);
    await reading.catch(() => {});
    return code;
  });
  const running = () => proc.exitCode === null && proc.signalCode === null;
  const log = () => {
    if (!input.logFile) return captured.stdout + captured.stderr;
    try {
      return readFileSync(input.logFile, "utf8");
    } catch {
      return "";
    }
  };
  const child: HeraldChild = {
    proc,
    port,
    url,
    running,
    stdout: () => captured.stdout,
    stderr: () => captured.stderr,
    log,
    exited: () => done,
    async waitForHealth(options = {}) {
      const ready = options.ready ?? ((status: number) => status >= 200 && status < 300);
      const deadline = Date.now() + (options.timeoutMs ?? 20_000);
      for (;;) {
        if (!running()) {
          await done;
          throw new Error(
            `herald serve on ${url} exited with ${proc.exitCode ?? proc.signalCode}:\n${log()}`,
          );
        }
        const status = await fetch(`${url}/health`).then(
          async (r) => {
            await r.arrayBuffer();
            return r.status;
          },
          () => 0,
        );
        if (status !== 0 && ready(status)) return;
        if (Date.now() > deadline) {
          await child.kill();
          throw new Error(`herald serve on ${url} did not come up in time:\n${log()}`);
        }
        await Bun.sleep(options.pollMs ?? 50);
      }
    },
    async kill(signal = "SIGKILL") {
      if (running()) proc.kill(signal);
      await done;
    },
    async stop() {
      await child.kill("SIGTERM");
      return proc.exitCode;
    },
  };
  return child;
}
