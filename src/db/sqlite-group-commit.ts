import type { Database } from "bun:sqlite";

/** Transactions committed together at most: bounds how long the first of them waits for its commit. */
const MAX_GROUP = 64;
/** Nor does a group take new work once it has run this long. */
const MAX_GROUP_MS = 10;

interface Waiting {
  work: () => Promise<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * The SQLite writer's transactions, one at a time as before, but committed in groups: work that
 * arrives while a transaction runs joins the same BEGIN IMMEDIATE … COMMIT, each piece inside its own
 * savepoint, so a piece that fails is rolled back alone and the others go on. Nobody hears of success
 * before the COMMIT that holds their writes; if it fails, every piece of the group fails. One commit
 * (WAL write and, now and then, a checkpoint) then serves many requests, which is where a busy server
 * spent most of its write time. Pieces run one after another, so each sees exactly what running them
 * serially would show it.
 */
export class GroupCommitWriter {
  private waiting: Waiting[] = [];
  private running: Promise<void> | null = null;

  constructor(
    private readonly writer: Database,
    /**
     * Ends the reader's shared snapshot; called before BEGIN and before COMMIT. A snapshot held
     * across a commit keeps the checkpoint from reaching the end of the WAL, which then never
     * restarts and grows without bound, and reads after the commit must see it.
     */
    private readonly releaseReads: () => void,
  ) {}

  run<T>(work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ work, resolve: resolve as (value: unknown) => void, reject });
      this.running ??= this.drain();
    });
  }

  /** Resolves once no transaction is running or waiting. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    try {
      while (this.waiting.length > 0) await this.runGroup();
    } finally {
      this.running = null;
    }
  }

  private async runGroup(): Promise<void> {
    const { writer } = this;
    const done: { piece: Waiting; result: unknown }[] = [];
    try {
      this.releaseReads();
      writer.exec("BEGIN IMMEDIATE");
    } catch (error) {
      for (const piece of this.waiting.splice(0)) piece.reject(error);
      return;
    }
    const startedAt = performance.now();
    let lost: unknown = null; // the error that ended the whole transaction, if one did
    while (done.length < MAX_GROUP && performance.now() - startedAt < MAX_GROUP_MS) {
      // Requests that arrived in the same turn of the event loop have had no chance to queue yet:
      // one more turn lets them join this commit (a few microseconds when nothing else is waiting).
      if (this.waiting.length === 0) await new Promise((resolve) => setImmediate(resolve));
      if (this.waiting.length === 0) break;
      const piece = this.waiting.shift()!;
      writer.exec("SAVEPOINT piece");
      try {
        const result = await piece.work();
        writer.exec("RELEASE piece");
        done.push({ piece, result });
      } catch (error) {
        piece.reject(error);
        // Some errors (disk full, I/O) make SQLite roll back the whole transaction on its own.
        if (!writer.inTransaction) {
          lost = error;
          break;
        }
        writer.exec("ROLLBACK TO piece");
        writer.exec("RELEASE piece");
      }
    }
    try {
      if (lost) throw lost;
      this.releaseReads();
      writer.exec("COMMIT");
    } catch (error) {
      if (writer.inTransaction) writer.exec("ROLLBACK");
      for (const { piece } of done) piece.reject(error);
      return;
    }
    for (const { piece, result } of done) piece.resolve(result);
  }
}
