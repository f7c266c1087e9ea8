// Waking the webhook sender when this process commits an event or a delivery, instead of leaving
// it to the jobs' next one-second tick (which stays: it finds what other processes committed, and
// retries that fall due).
import { currentTransaction, engineOf, type Db, type Engine } from "../../db/engine.ts";

/** What a wake reaches on one database: the sender run under way, else a way to start one. */
interface Wakeable {
  /** Starts a run of the webhook sender (the server's `webhook-deliveries` job, through its scheduler). */
  start: () => unknown;
  /** A start was asked for and that run has not begun yet: further wakes wait for it. */
  startRequested: boolean;
  /** The run under way in this process, which takes new work without a new run. */
  running: SenderRun | null;
}

/** A sender run, as wakes see it. */
export interface SenderRun {
  /** Fans out and claims again; false when the run takes no more work (its time is up, or stopping). */
  poke(): boolean;
}

const wakeables = new WeakMap<Engine, Wakeable>();

/**
 * Arms waking for a server's database: from now on `wakeWebhooks` starts the sender with `start`
 * (or, while a run is under way, makes that run dispatch and claim again). The server calls this
 * when it starts its jobs; the returned function disarms it (call it before the scheduler stops).
 * Without it, waking does nothing: tests run the jobs by hand.
 */
export function armWebhookWake(db: Db, start: () => unknown): () => void {
  const engine = engineOf(db);
  const wakeable: Wakeable = { start, startRequested: false, running: null };
  wakeables.set(engine, wakeable);
  return () => {
    if (wakeables.get(engine) === wakeable) wakeables.delete(engine);
  };
}

/**
 * Says that an event (or a delivery) was committed on this database: the sender fans it out and
 * sends it now. Call it after the commit (on PostgreSQL a run that starts before the commit does not
 * see the event; it then goes with the next tick, a second later). Cheap and coalesced: many wakes
 * while a run is starting ask for one run.
 */
export function wakeWebhooks(db: Db): void {
  const wakeable = wakeables.get(engineOf(db));
  if (!wakeable) return;
  // Outside the caller's transaction, if any: the sender's own transactions must not join it.
  currentTransaction.exit(() => {
    if (wakeable.running?.poke()) return;
    // No run, or one that is finishing: a new run (it starts when the one under way has ended).
    if (!wakeable.startRequested) {
      wakeable.startRequested = true;
      Promise.resolve()
        .then(wakeable.start)
        .catch(() => {})
        .finally(() => {
          wakeable.startRequested = false;
        });
    }
  });
}

/**
 * Registers the sender run under way, so wakes reach it; returns the function that unregisters it
 * (when the run ends: later wakes start a new one).
 */
export function senderRunning(db: Db, run: SenderRun): () => void {
  const wakeable = wakeables.get(engineOf(db));
  if (!wakeable) return () => {};
  wakeable.running = run;
  wakeable.startRequested = false;
  return () => {
    if (wakeable.running === run) wakeable.running = null;
  };
}
