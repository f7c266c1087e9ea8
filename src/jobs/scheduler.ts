import { Cron } from "croner";
import type { Herald } from "../herald.ts";

/** A recurring job: it keeps no state of its own; the database says what is due. */
export interface Job {
  /** Readable id, shown in logs and /health. */
  id: string;
  /** croner pattern with a seconds field. */
  pattern: string;
  /** `stopping` is aborted when the server stops: long runs stop taking new work and finish what they hold. */
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
  private inProgress = new Set<Promise<void>>();
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

  /** Starts every job's schedule; `protect` stops a slow run from overlapping the next. */
  start(): void {
    for (const job of this.jobs) {
      this.crons.push(new Cron(job.pattern, { protect: true, name: job.id }, () => this.runNow(job.id)));
    }
  }

  /** Stops the schedules and waits for runs in progress, so the database can be closed after. */
  async stop(): Promise<void> {
    for (const cron of this.crons) cron.stop();
    this.crons = [];
    this.stopping.abort();
    while (this.inProgress.size > 0) await Promise.allSettled([...this.inProgress]);
  }

  /** Runs one job now and records how it went; errors are logged, never thrown. */
  async runNow(id: string): Promise<void> {
    const job = this.jobs.find((j) => j.id === id);
    const status = this.status.get(id);
    if (!job || !status) throw new Error(`no job ${id}`);
    const run = this.run(job, status);
    this.inProgress.add(run);
    try {
      await run;
    } finally {
      this.inProgress.delete(run);
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
