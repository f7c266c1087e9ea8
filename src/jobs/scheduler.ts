import { Cron } from "croner";
import type { Herald } from "../herald.ts";

/** A recurring job: it keeps no state of its own; the database says what is due. */
export interface Job {
  /** Readable id, shown in logs and /health. */
  id: string;
  /** croner pattern with a seconds field. */
  pattern: string;
  /**
   * One run; the scheduler awaits the promise it returns, and never starts a job again before its
   * run has finished. `stopping` is aborted when the server stops: long runs stop taking new work
   * and finish what they hold.
   */
  run(h: Herald, stopping: AbortSignal): Promise<unknown> | unknown;
}

/** What /health reports about one job. */
export interface JobStatus {
  id: string;
  last_started_at: number | null;
  last_finished_at: number | null;
  last_error: string | null;
}

/**
 * The scheduler's heartbeat, for /health: its most frequent job (the publishing engine, every
 * second) starts a run on every beat, so a beat missing for many intervals means the schedules
 * stopped firing or that job hangs.
 */
export interface Heartbeat {
  /** Whether the schedules run (false when jobs are run by hand, as in tests). */
  started: boolean;
  job: string;
  interval_ms: number;
  /** The last start of a run of `job` (epoch ms, wall clock); the start of the schedules before that. */
  last_beat_at: number | null;
}

/**
 * A job's schedule. Patterns are read in UTC, never in the machine's time zone: every job names only
 * seconds and minutes, and the local zone (ICU's zone data and code, ~2–3 MiB) is then never loaded
 * (docs/decisions.md, "Issue 28: memory").
 */
export function scheduleOf(
  pattern: string,
  options: { paused?: boolean; name?: string } = {},
  tick?: () => void,
) {
  const settings = { ...options, protect: true, utcOffset: 0 };
  return tick ? new Cron(pattern, settings, tick) : new Cron(pattern, settings);
}

/** The shortest gap between runs of a croner pattern (over its next few runs). */
function intervalOf(pattern: string): number {
  const runs = scheduleOf(pattern, { paused: true })
    .nextRuns(4)
    .map((d) => d.getTime());
  let gap = Number.POSITIVE_INFINITY;
  for (let i = 1; i < runs.length; i++) gap = Math.min(gap, runs[i]! - runs[i - 1]!);
  return Number.isFinite(gap) ? gap : 60_000;
}

/** Runs jobs in-process with croner; `runNow` lets operators and tests trigger one at once. */
export class Scheduler {
  private crons: Cron[] = [];
  private status = new Map<string, JobStatus>();
  /** Calls of `runNow` not finished yet, waiting or running (stop waits for all of them). */
  private inProgress = new Set<Promise<void>>();
  /** The run under way of each job: one at a time per job, whoever started it. */
  private running = new Map<string, Promise<void>>();
  private stopping = new AbortController();
  private startedAt: number | null = null;
  private readonly beat: { job: string; interval_ms: number } | null;

  constructor(
    private readonly h: Herald,
    private readonly jobs: Job[],
  ) {
    for (const job of jobs)
      this.status.set(job.id, {
        id: job.id,
        last_started_at: null,
        last_finished_at: null,
        last_error: null,
      });
    const intervals = jobs.map((job) => ({ job: job.id, interval_ms: intervalOf(job.pattern) }));
    this.beat = intervals.sort((a, b) => a.interval_ms - b.interval_ms)[0] ?? null;
  }

  /** Starts every job's schedule; a tick that comes while the job still runs is skipped. */
  start(): void {
    this.startedAt = Date.now();
    for (const job of this.jobs) {
      const tick = () => (this.running.has(job.id) ? undefined : this.runNow(job.id));
      this.crons.push(scheduleOf(job.pattern, { name: job.id }, tick));
    }
  }

  /** Stops the schedules and waits for runs in progress, so the database can be closed after. */
  async stop(): Promise<void> {
    for (const cron of this.crons) cron.stop();
    this.crons = [];
    this.stopping.abort();
    while (this.inProgress.size > 0) await Promise.allSettled([...this.inProgress]);
  }

  /**
   * Runs one job now and records how it went; errors are logged, never thrown. When the job is
   * already running, this waits for that run to end and then runs it again (so what was due when
   * it was called is done when it returns), never two runs of one job at once.
   */
  async runNow(id: string): Promise<void> {
    const job = this.jobs.find((j) => j.id === id);
    const status = this.status.get(id);
    if (!job || !status) throw new Error(`no job ${id}`);
    const call = this.runAlone(job, status);
    this.inProgress.add(call);
    try {
      await call;
    } finally {
      this.inProgress.delete(call);
    }
  }

  /** Waits for the job's run under way, if any, then runs it, marked as running meanwhile. */
  private async runAlone(job: Job, status: JobStatus): Promise<void> {
    // Checking and marking happen with no await between them: two waiters cannot both start.
    for (let under = this.running.get(job.id); under; under = this.running.get(job.id)) await under;
    const run = this.run(job, status);
    this.running.set(job.id, run);
    try {
      await run;
    } finally {
      this.running.delete(job.id);
    }
  }

  private async run(job: Job, status: JobStatus): Promise<void> {
    status.last_started_at = Date.now();
    try {
      await job.run(this.h, this.stopping.signal);
      status.last_error = null;
    } catch (error) {
      status.last_error = (error as Error).message;
      this.h.logger.error("job failed", { job: job.id, error: (error as Error).message });
    } finally {
      status.last_finished_at = Date.now();
    }
  }

  /** When the most frequent job last started (see Heartbeat). */
  heartbeat(): Heartbeat | null {
    if (!this.beat) return null;
    const started = this.status.get(this.beat.job)?.last_started_at ?? null;
    const since = started === null ? this.startedAt : Math.max(started, this.startedAt ?? 0);
    return { started: this.startedAt !== null, ...this.beat, last_beat_at: since };
  }

  /** The last run of each job. */
  report(): JobStatus[] {
    return [...this.status.values()].map((s) => ({ ...s }));
  }
}
