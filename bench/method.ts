// The one measuring method every benchmark uses: a warm-up that is thrown away, then a fixed number
// of repetitions, reported as the median with the spread (lowest to highest) and each run.

/** Repetitions after the warm-up (BENCH_ROUNDS overrides it for a quick local look). */
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

/** Median, lowest and highest of a series. */
export interface Summary {
  median: number;
  min: number;
  max: number;
  runs: number[];
}

export function summarize(runs: number[]): Summary {
  const sorted = [...runs].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  return { median, min: sorted[0]!, max: sorted[sorted.length - 1]!, runs };
}

/** Runs `measure` once to warm up, then `rounds` times; the summary of the measured runs. */
export async function repeat(measure: () => Promise<number> | number, rounds = ROUNDS): Promise<Summary> {
  await measure();
  const runs: number[] = [];
  for (let i = 0; i < rounds; i++) runs.push(await measure());
  return summarize(runs);
}

/**
 * `repeat` for a measurement that yields a whole run: the summary of `figure(run)` over the measured
 * runs, and those runs (the warm-up left out) for the other figures of the same runs.
 */
export async function repeatRuns<R>(
  measure: () => Promise<R>,
  figure: (run: R) => number,
): Promise<{ summary: Summary; runs: R[] }> {
  const all: R[] = [];
  const summary = await repeat(async () => {
    const run = await measure();
    all.push(run);
    return figure(run);
  });
  return { summary, runs: all.slice(1) };
}

/** "1,234 (1,200–1,260)" with `digits` decimals: the median, then the spread. */
export function formatSummary(s: Summary, digits = 0): string {
  const f = (n: number) =>
    n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
  return s.min === s.max ? f(s.median) : `${f(s.median)} (${f(s.min)}–${f(s.max)})`;
}

/** A ratio as a percentage with no decimals. */
export function percent(part: number, whole: number): string {
  return `${Math.round((100 * part) / whole)}%`;
}

/** PostgreSQL requires a key to seal credentials with; any fixed one does for a benchmark. */
export const BENCH_SECRET_KEY = "bench-secret-key-0123456789abcdefghijklmnopqrstuvwxyz";

/**
 * For a benchmark run alone (`bun bench/<name>.ts`): the engine HERALD_DATABASE_URL names (PostgreSQL),
 * or SQLite when it is unset; its variables and label.
 */
export function engineFromEnvironment(): { env: Record<string, string>; label: string } {
  const url = process.env.HERALD_DATABASE_URL;
  if (!url) return { env: {}, label: "SQLite" };
  const secret = process.env.HERALD_SECRET_KEY ?? BENCH_SECRET_KEY;
  return { env: { HERALD_DATABASE_URL: url, HERALD_SECRET_KEY: secret }, label: "PostgreSQL" };
}
