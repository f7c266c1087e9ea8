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

/** Runs jobs in-process with croner; `runNow` lets operators and tests trigger one at once. */
export class Scheduler {
  private crons: Cron[] = [];
  private status = new Map<string, JobStatus>();
  /** Calls of `runNow` not finished yet, waiting or running (stop waits for all of them). */
  private inProgress = new Set<Promise<void>>();
  /** The run under way of each job: one at a time per job, whoever started it. */
  private running = new Map<string, Promise<void>>();
  private stopping = new AbortController();

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
  }

  /** Starts every job's schedule; a tick that comes while the job still runs is skipped. */
  start(): void {
    for (const job of this.jobs) {
      const tick = () => (this.running.has(job.id) ? undefined : this.runNow(job.id));
      this.crons.push(new Cron(job.pattern, { protect: true, name: job.id }, tick));
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

  /** The last run of each job. */
  report(): JobStatus[] {
    return [...this.status.values()].map((s) => ({ ...s }));
  }
}
