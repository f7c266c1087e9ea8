// Running the real command-line client as a process, as a user does: its own config directory (never
// the tester's), HERALD_* only as given, stdin as given, and the three outputs to assert on.
import { expect } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUN, MAIN, ROOT, cleanEnv } from "../helpers/process.ts";

/** What one run printed and how it ended. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options of one run: text for stdin (else none), and a working directory. */
export interface RunOptions {
  stdin?: string;
  cwd?: string;
}

/**
 * Runs `bun src/main.ts …args` to completion with `env` (plus HERALD_NO_BROWSER=1; a test never
 * opens a browser). Give HERALD_CONFIG_DIR in `env`: without it the client reads the tester's login.
 */
export async function herald(
  args: string[],
  env: Record<string, string>,
  options: RunOptions = {},
): Promise<CliResult> {
  const proc = Bun.spawn([BUN, MAIN, ...args], {
    cwd: options.cwd ?? ROOT,
    env: cleanEnv({ HERALD_NO_BROWSER: "1", ...env }),
    stdout: "pipe",
    stderr: "pipe",
    stdin: options.stdin === undefined ? "ignore" : new Response(options.stdin),
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

/**
 * Runs the CLI on a pseudo-terminal (util-linux `script`), as a person at a terminal does: `env` as
 * given (no HERALD_NO_BROWSER added), and `answer` typed once `prompt` shows. Returns the exit code and
 * everything the terminal showed (stdout and stderr together).
 */
export async function heraldOnTerminal(
  args: string[],
  env: Record<string, string>,
  typed?: { prompt: string; answer: string },
): Promise<{ code: number; screen: string }> {
  const quote = (a: string) => `'${a.replace(/'/g, "'\\''")}'`;
  const proc = Bun.spawn(["script", "-qec", [BUN, MAIN, ...args].map(quote).join(" "), "/dev/null"], {
    cwd: ROOT,
    env: cleanEnv(env),
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  let screen = "";
  let answered = false;
  const decoder = new TextDecoder();
  for await (const chunk of proc.stdout) {
    screen += decoder.decode(chunk);
    if (typed && !answered && screen.includes(typed.prompt)) {
      answered = true;
      await proc.stdin.write(typed.answer);
      await proc.stdin.flush();
    }
  }
  return { code: await proc.exited, screen };
}

/** Whether pseudo-terminal tests can run here (util-linux `script`). */
export const HAS_TERMINAL = Bun.which("script") !== null;

/** Asserts a successful run (showing stderr when it is not) and returns stdout. */
export function succeeded(r: CliResult): string {
  expect({ code: r.code, stderr: r.code === 0 ? "" : r.stderr }).toEqual({ code: 0, stderr: "" });
  return r.stdout;
}

/** Asserts a failed run with `code`, nothing on stdout and one `herald: …` line on stderr; returns it. */
export function failed(r: CliResult, code: number): string {
  expect({ code: r.code, stdout: r.stdout }).toEqual({ code, stdout: "" });
  const lines = r.stderr.trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toStartWith("herald: ");
  return lines[0]!;
}

/** A table's lines split into cells (columns are two or more spaces apart). */
export function cells(stdout: string): string[][] {
  return stdout
    .trimEnd()
    .split("\n")
    .map((line) => line.split(/ {2,}/));
}

const dirs: string[] = [];
/** A new temporary directory, removed by `removeTempDirs`. */
export function tempDir(prefix = "herald-cli-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

/** Removes every directory `tempDir` made. */
export function removeTempDirs(): void {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** A TCP port nobody listens on right now (briefly bound, then released). */
export async function closedPort(): Promise<number> {
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  const port = probe.port!;
  await probe.stop(true);
  return port;
}
