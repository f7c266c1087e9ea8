// Runs the cases of every operation against the live server within a time budget, and keeps the first
// failing request of each operation with everything needed to replay it.
import fc from "fast-check";
import { casesOf, type FuzzCase } from "./cases.ts";
import { hintsFor } from "./hints.ts";
import { templatesFor } from "./templates.ts";
import { violations } from "./checks.ts";
import type { Operation, ResponseValidator } from "./document.ts";
import { describe, requestOf, send, type Answer, type SentRequest } from "./send.ts";
import type { World } from "./world.ts";

/** How one run is bounded and seeded (see docs/reliability.md, "Contract fuzzing"). */
export interface FuzzSettings {
  seed: number;
  /** Wall-clock budget of the whole run. */
  seconds: number;
  /** At most this many requests per operation. */
  runsPerOperation: number;
  /** Only operations whose name contains this (`POST /workspaces`), when set. */
  only: string | null;
  /** Print the requests and statuses of every operation (random runs always do). */
  verbose: boolean;
}

/**
 * The run's settings: HERALD_FUZZ_SEED, else the fixed seed, or a random one for `npm run fuzz`
 * (HERALD_FUZZ_RANDOM=1, never under CI); budgets from HERALD_FUZZ_SECONDS and HERALD_FUZZ_RUNS.
 */
export function settingsFromEnv(env: Record<string, string | undefined> = process.env): FuzzSettings {
  const random = env.HERALD_FUZZ_RANDOM === "1" && !env.CI;
  const seed = env.HERALD_FUZZ_SEED
    ? Number(env.HERALD_FUZZ_SEED)
    : random
      ? Math.floor(Math.random() * 2 ** 31)
      : 182_026;
  const seconds = Number(env.HERALD_FUZZ_SECONDS ?? (random ? 300 : env.CI ? 60 : 20));
  const runsPerOperation = Number(env.HERALD_FUZZ_RUNS ?? (random ? 100_000 : 400));
  const verbose = random || env.HERALD_FUZZ_VERBOSE === "1";
  return { seed, seconds, runsPerOperation, only: env.HERALD_FUZZ_ONLY || null, verbose };
}

/** One operation's outcome. */
export interface OperationReport {
  op: Operation;
  requests: number;
  /** How many answers had each status. */
  statuses: Record<number, number>;
  failure: {
    request: SentRequest | null;
    answer: Answer | null;
    problems: string[];
    labels: string[];
  } | null;
}

/** A seed per operation: an operation replays alone (HERALD_FUZZ_ONLY) as it ran in the full run. */
function seedOf(seed: number, op: Operation): number {
  let hash = seed | 0;
  for (const char of op.name) hash = Math.imul(hash ^ char.charCodeAt(0), 16_777_619);
  return hash >>> 0;
}

// Destructive operations last, so the others run on the resources made beforehand.
const destructive = (op: Operation) => op.method === "DELETE" || /\/(revoke|remove|cancel)$/.test(op.path);

/** Fuzzes every operation in turn; each gets an equal share of what is left of the budget. */
export async function fuzz(
  world: World,
  operations: Operation[],
  validator: ResponseValidator,
  settings: FuzzSettings,
): Promise<OperationReport[]> {
  // An exact name picks that one operation; otherwise every operation whose name contains it.
  const exact = operations.some((op) => op.name === settings.only);
  const chosen = operations
    .filter(
      (op) => settings.only === null || (exact ? op.name === settings.only : op.name.includes(settings.only)),
    )
    .sort((a, b) => Number(destructive(a)) - Number(destructive(b)));
  const deadline = Date.now() + settings.seconds * 1000;
  const hints = hintsFor(world);
  const templates = templatesFor(world);
  // HERALD_FUZZ_TRACE=<part of an operation name> prints every request of those operations and its answer.
  const trace = process.env.HERALD_FUZZ_TRACE || null;
  const reports: OperationReport[] = [];
  for (const [index, op] of chosen.entries()) {
    const share = Math.max(500, (deadline - Date.now()) / (chosen.length - index));
    const context = { world, validator, settings, trace };
    reports.push(await fuzzOperation(op, casesOf(op, world, hints, templates), share, context));
  }
  return reports;
}

const REPLAY = "bun test test/fuzz/contract.test.ts";

/** The failure report: the seed, the operation and the exact request for each failing operation. */
export function failureReport(reports: OperationReport[], settings: FuzzSettings): string {
  const failed = reports.filter((r) => r.failure);
  return failed
    .map(({ op, failure }) =>
      [
        `✗ ${op.name}   (HERALD_FUZZ_SEED=${settings.seed} HERALD_FUZZ_ONLY='${op.name}' ${REPLAY})`,
        ...failure!.problems.map((p) => `  - ${p}`),
        failure!.labels.length
          ? `  variation: ${failure!.labels.join(", ")}`
          : "  variation: none (a valid request)",
        describe(failure!.request, failure!.answer)
          .split("\n")
          .map((l) => `    ${l}`)
          .join("\n"),
      ].join("\n"),
    )
    .join("\n\n");
}

/** One line per operation: requests and the statuses they got (`npm run fuzz` prints it). */
export function statusTable(reports: OperationReport[]): string {
  return reports
    .map((r) => {
      const statuses = Object.entries(r.statuses)
        .map(([status, n]) => `${status}×${n}`)
        .join(" ");
      return `${String(r.requests).padStart(6)}  ${r.op.name}  ${statuses}`;
    })
    .join("\n");
}

/** Sends the cases of one operation for at most `share` ms; the first failing request is kept. */
async function fuzzOperation(
  op: Operation,
  cases: fc.Arbitrary<FuzzCase>,
  share: number,
  context: { world: World; validator: ResponseValidator; settings: FuzzSettings; trace: string | null },
): Promise<OperationReport> {
  const { world, validator, settings, trace } = context;
  const report: OperationReport = { op, requests: 0, statuses: {}, failure: null };
  // fast-check stops waiting for a run at the time limit; the request is awaited here, so operations
  // never overlap and its answer is still checked.
  let inFlight: Promise<boolean> = Promise.resolve(true);
  const run = async (c: FuzzCase): Promise<boolean> => {
    let request: SentRequest | null = null;
    let answer: Answer | null = null;
    let problems: string[];
    try {
      request = await requestOf(world, op, c);
      answer = await send(world, request);
      if (answer === null) return true; // the client would not send it: nothing reached the server
      problems = violations(op, answer, validator);
      report.statuses[answer.status] = (report.statuses[answer.status] ?? 0) + 1;
      if (trace !== null && op.name.includes(trace))
        console.log(`${c.labels.join(", ")}\n${describe(request, answer)}\n`);
    } catch (error) {
      problems = [`${request ? "no answer" : "the request could not be built"}: ${String(error)}`];
    }
    report.requests += 1;
    if (problems.length === 0) return true;
    report.failure ??= { request, answer, problems, labels: c.labels };
    return false;
  };
  let details: fc.RunDetails<[FuzzCase]>;
  try {
    details = await fc.check(
      fc.asyncProperty(cases, (c) => (inFlight = run(c))),
      {
        seed: seedOf(settings.seed, op),
        numRuns: settings.runsPerOperation,
        interruptAfterTimeLimit: share,
        markInterruptAsFailure: false,
        endOnFailure: true,
      },
    );
  } catch (error) {
    // A generator that throws is a fuzzer bug: reported with the seed like any failure.
    await inFlight;
    const problems = [`the generator failed: ${error instanceof Error ? error.stack : String(error)}`];
    return { ...report, failure: { request: null, answer: null, problems, labels: [] } };
  }
  await inFlight;
  // fast-check calls a run cut short before any success a failure without an error: not one here.
  const outOfTime = details.interrupted && details.errorInstance === null;
  if (details.failed && !report.failure && !outOfTime)
    report.failure = {
      request: null,
      answer: null,
      problems: [`fuzzer error: ${fc.defaultReportMessage(details) ?? details.errorInstance}`],
      labels: [],
    };
  return report;
}
