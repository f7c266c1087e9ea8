import type { Database } from "bun:sqlite";
import { closeSync, constants, fdatasync, fsyncSync, openSync } from "node:fs";

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
 * serially would show it. With a `WalSync`, nobody hears of success before the WAL holding the group
 * is synced either; the next group runs while that sync is under way.
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
    /** Syncs the commits so far to disk; null: acknowledged when SQLite's COMMIT returns. */
    private readonly durable: WalSync | null = null,
  ) {}

  /** Groups committed whose sync has not finished yet (their callers still wait). */
  private syncing = new Set<Promise<void>>();

  run<T>(work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ work, resolve: resolve as (value: unknown) => void, reject });
      this.running ??= this.drain();
    });
  }

  /** Resolves once no transaction is running or waiting. */
  async idle(): Promise<void> {
    while (this.running || this.syncing.size > 0) {
      await this.running;
      await Promise.all(this.syncing);
    }
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
    // After a failed sync nothing more is committed: a later commit could be seen and acted on, then
    // lost with the pages the kernel dropped (see WalSync.failure).
    const failure = this.durable?.failure;
    if (failure) {
      for (const piece of this.waiting.splice(0)) piece.reject(failure);
      return;
    }
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
    if (!this.durable) {
      for (const { piece, result } of done) piece.resolve(result);
      return;
    }
    const synced = this.durable.sync().then(
      () => {
        for (const { piece, result } of done) piece.resolve(result);
      },
      (error: unknown) => {
        for (const { piece } of done) piece.reject(error);
      },
    );
    this.syncing.add(synced);
    void synced.finally(() => this.syncing.delete(synced));
  }
}

/**
 * The sync of `HERALD_SQLITE_SYNC=full`: fdatasync of the WAL on Bun's thread pool, so the event loop
 * serves requests (and the next group runs) meanwhile, where SQLite's own `synchronous = FULL` would
 * stall every request for the length of each sync. Every caller waits for a sync that began after
 * it asked, i.e. after its COMMIT wrote the group's frames: one sync covers every commit before it
 * (a WAL is appended in order). The WAL is never replaced while this process keeps a connection open
 * (a WAL-mode connection holds a shared lock that keeps others from deleting it), and the frames a
 * checkpoint recycles were first synced and copied into the database file, which it syncs too.
 */
export class WalSync {
  private readonly fd: number;
  private running: Promise<void> | null = null;
  private next: Promise<void> | null = null;
  /**
   * The first failed sync, kept for good. After fdatasync reports an error, Linux may have dropped
   * the pages it could not write and marked them clean, so a later sync can succeed without them
   * ("fsyncgate"): no later commit can be acknowledged as durable. Every later sync fails with this
   * error, the writer stops committing, and /health answers 503 until the process is restarted
   * (SQLite then reads what is really on disk).
   */
  failure: SyncFailure | null = null;

  constructor(walPath: string, dataDir: string) {
    this.fd = openSync(walPath, constants.O_RDONLY | constants.O_CREAT, 0o600);
    // Once at start: the WAL's contents so far (migrations) and its name in the directory.
    fsyncSync(this.fd);
    const directory = openSync(dataDir, "r");
    try {
      fsyncSync(directory);
    } finally {
      closeSync(directory);
    }
  }

  /** Resolves once everything written to the WAL before this call is on disk. */
  sync(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.running === null) return this.begin();
    // The sync under way may have begun before the caller's commit: the next one, shared by every
    // caller until it begins.
    this.next ??= this.running
      .catch(() => {})
      .then(() => {
        this.next = null;
        return this.begin();
      });
    return this.next;
  }

  close(): void {
    closeSync(this.fd);
  }

  private begin(): Promise<void> {
    const done = new Promise<void>((resolve, reject) =>
      fdatasync(this.fd, (error) => {
        if (!error) return resolve();
        this.failure ??= new SyncFailure(error);
        reject(this.failure);
      }),
    ).finally(() => {
      if (this.running === done) this.running = null;
    });
    this.running = done;
    return done;
  }
}

/**
 * A failed sync of the WAL: its `code` is the system's (EIO, ENOSPC…), so requests that wait on it
 * answer 503 as other storage faults do (core/storage-problem.ts).
 */
export class SyncFailure extends Error {
  readonly code: string;

  constructor(cause: NodeJS.ErrnoException) {
    super(
      `syncing the database's write-ahead log failed (${cause.code ?? cause.message}): ` +
        "writes are refused until Herald is restarted",
      { cause },
    );
    this.name = "SyncFailure";
    this.code = cause.code ?? "EIO";
  }
}
