// Read benchmark: an authenticated `GET /v1/workspaces/{ws}/posts/{id}` and `GET …/posts` (a page of
// 20) against a `herald serve` process, driven by wrk (Debian's `wrk`) from another process. It
// uses only the CLI and HTTP, so the same file measures any version of Herald (before/after runs).
import { spawn, spawnSync, type Subprocess } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");
const BUN = join(ROOT, "node_modules", ".bin", "bun");
const DURATION_S = 10;
const ROUNDS = 3;

interface Measure {
  name: string;
  rps: number[];
  p99Ms: number[];
}

function freePort(): number {
  const server = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = server.port!;
  void server.stop(true);
  return port;
}

/** Runs wrk once; requests/s and p99 latency (ms) from its summary. */
function wrk(url: string, key: string): { rps: number; p99: number } {
  const out = spawnSync(
    ["wrk", "-t2", "-c64", `-d${DURATION_S}s`, "--latency", "-H", `Authorization: Bearer ${key}`, url],
    { stdout: "pipe" },
  ).stdout.toString();
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0);
  const p99 = /99%\s+([\d.]+)(us|ms|s)/.exec(out);
  const unit = { us: 0.001, ms: 1, s: 1000 }[p99?.[2] as "us" | "ms" | "s"] ?? 1;
  if (/Non-2xx/.test(out)) throw new Error(`wrk saw errors:\n${out}`);
  return { rps, p99: Number(p99?.[1] ?? 0) * unit };
}

/** The read benchmark's section of docs/benchmarks.md, with `label` naming the engine. */
export async function readsBenchmark(env: Record<string, string> = {}, label = "SQLite"): Promise<string> {
  if (spawnSync(["which", "wrk"]).exitCode !== 0) return "## Reads\n\nSkipped: `wrk` is not installed.";
  const dataDir = mkdtempSync(join(tmpdir(), "herald-reads-"));
  const port = freePort();
  const origin = `http://127.0.0.1:${port}`;
  const serverEnv = {
    ...process.env,
    HERALD_DATA_DIR: dataDir,
    HERALD_PORT: String(port),
    HERALD_ACCESS_LOG: "0",
    HERALD_RATE_LIMIT_PER_MINUTE: "1000000",
    ...env,
  };
  let server: Subprocess | null = null;
  try {
    const boot = spawnSync(
      [
        BUN,
        "src/main.ts",
        "admin",
        "bootstrap",
        "--email",
        "r@example.com",
        "--workspace-name",
        "R",
        "--json",
      ],
      { cwd: ROOT, env: serverEnv, stdout: "pipe", stderr: "pipe" },
    );
    if (boot.exitCode !== 0) throw new Error(`bootstrap failed: ${boot.stderr.toString()}`);
    const account = JSON.parse(boot.stdout.toString()) as { api_key: string; workspace_id: string };
    server = spawn([BUN, "src/main.ts", "serve"], {
      cwd: ROOT,
      env: serverEnv,
      stdout: "ignore",
      stderr: "ignore",
    });
    for (let i = 0; i < 100; i++) {
      if (
        await fetch(`${origin}/health`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      await Bun.sleep(100);
    }
    const base = `${origin}/v1/workspaces/${account.workspace_id}/posts`;
    const headers = { authorization: `Bearer ${account.api_key}`, "content-type": "application/json" };
    let postId = "";
    for (let i = 0; i < 25; i++) {
      const body = {
        group: `g${i}`,
        when: "draft",
        posts: [{ channel: "mastodon", body: [`read bench ${i}`] }],
      };
      const created = await fetch(base, { method: "POST", headers, body: JSON.stringify(body) });
      postId = ((await created.json()) as { posts: { id: string }[] }).posts[0]!.id;
    }
    const measures: Measure[] = [
      { name: "GET one post", rps: [], p99Ms: [] },
      { name: "GET a page of 20 posts", rps: [], p99Ms: [] },
    ];
    const urls = [`${base}/${postId}`, `${base}?limit=20`];
    wrk(urls[0]!, account.api_key); // warm-up
    for (let round = 0; round < ROUNDS; round++)
      measures.forEach((m, i) => {
        const r = wrk(urls[i]!, account.api_key);
        m.rps.push(r.rps);
        m.p99Ms.push(r.p99);
      });
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const rows = measures.map(
      (m) =>
        `| ${m.name} (${label}) | ${median(m.rps).toFixed(0)} req/s (runs: ${m.rps.map((r) => r.toFixed(0)).join(", ")}) | ${median(m.p99Ms).toFixed(1)} ms |`,
    );
    return [
      "## Reads",
      "",
      `\`herald serve\` in its own process; wrk -t2 -c64, ${DURATION_S} s per run after a warm-up run, ` +
        `${ROUNDS} runs, median shown. Authenticated with a live key; the access log off.`,
      "",
      "| Request | Throughput | p99 latency |",
      "|---|---|---|",
      ...rows,
    ].join("\n");
  } finally {
    server?.kill();
    await server?.exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.main) console.log(await readsBenchmark());
