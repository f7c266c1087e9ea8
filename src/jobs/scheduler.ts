import { Cron } from "croner";
import type { Herald } from "../herald.ts";

/** A recurring job: it keeps no state of its own; the database says what is due. */
export interface Job {
  /** Readable id, shown in logs and /health. */
  id: string;
  /** croner pattern with a seconds field. */
  pattern: string;
  run(h: Herald): Promise<unknown> | unknown;
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

  constructor(private readonly h: Herald, private readonly jobs: Job[]) {
    for (const job of jobs) this.status.set(job.id, { id: job.id, last_started_at: null, last_finished_at: null, last_error: null });
  }

  /** Starts every job's schedule; `protect` stops a slow run from overlapping the next. */
  start(): void {
    for (const job of this.jobs) {
      this.crons.push(new Cron(job.pattern, { protect: true, name: job.id }, () => this.runNow(job.id)));
    }
  }

  /** Stops the schedules (a run in progress finishes on its own). */
  stop(): void {
    for (const cron of this.crons) cron.stop();
    this.crons = [];
  }

  /** Runs one job now and records how it went; errors are logged, never thrown. */
  async runNow(id: string): Promise<void> {
    const job = this.jobs.find((j) => j.id === id);
    const status = this.status.get(id);
    if (!job || !status) throw new Error(`no job ${id}`);
    status.last_started_at = Date.now();
    try {
      await job.run(this.h);
      status.last_error = null;
    } catch (error) {
      status.last_error = (error as Error).message;
      this.h.logger.error("job failed", { job: id, error: (error as Error).message });
    } finally {
      status.last_finished_at = Date.now();
    }
  }

  /** The last run of each job. */
  report(): JobStatus[] {
    return [...this.status.values()].map((s) => ({ ...s }));
  }
}
