import { SQL } from "bun";
import { drizzle } from "drizzle-orm/bun-sql";
import { BunSQLSession, BunSQLTransaction } from "drizzle-orm/bun-sql/session";
import { currentTransaction, ENGINE, followingTransactions, type Db, type Engine } from "./engine.ts";
import { postgresMigrations } from "./migrations-macro.ts" with { type: "macro" };
import { refuseNewerDatabase } from "./newer-database.ts";
import { defineTables } from "./tables.ts";
import { pgBuilders } from "./tables/builders-pg.ts";

/** The tables as PostgreSQL stores them (one build per process; every PostgreSQL database carries them). */
const TABLES = defineTables(pgBuilders);

/** Serialization failures and deadlocks: the transaction is retried from the start. */
const RETRYABLE = new Set(["40001", "40P01"]);
// Generous: under a burst, transactions touching one destination's posts collide often, and a
// transaction that gives up leaves its work to a lease expiry.
const MAX_ATTEMPTS = 60;
/**
 * Whether an error says a concurrent writer got there first in a way a retry resolves: a unique index
 * that fired after this transaction read the row free (a queue window). PostgreSQL may report such a
 * writer that way instead of as a serialization failure, depending on the plan its read took; the
 * module that knows the index marks the error (`concurrentWriter`).
 */
function concurrentWriter(error: unknown): boolean {
  return (error as { concurrentWriter?: unknown })?.concurrentWriter === true;
}

/** Any key: every Herald process takes this advisory lock to migrate, so migrations run once. */
const MIGRATION_LOCK = 7_201_412_066;

/** The PostgreSQL error code (SQLSTATE) of an error or of one it wraps. */
export function sqlState(error: unknown): string | null {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    const code = (e as { errno?: unknown }).errno;
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return null;
}

/**
 * Connects to PostgreSQL (a pool of `pool` connections) and applies pending migrations under an
 * advisory lock, so several processes starting together apply each migration once.
 */
export async function openPostgres(url: string, pool: number): Promise<Db> {
  const client = new SQL(url, { max: pool, idleTimeout: 60, connectionTimeout: 10 });
  const migrated = await migrate(client).catch(async (error: unknown) => {
    await client.close({ timeout: 5 });
    throw error;
  });
  const root = drizzle({ client });
  const { dialect, session } = root as unknown as { dialect: never; session: { options: never } };
  const schema = (root as unknown as { _: { schema: never } })._.schema;
  /**
   * A transaction with its isolation in its BEGIN (one round trip; drizzle's own sends BEGIN, then
   * SET TRANSACTION), handed to `work` as a drizzle handle on its connection.
   */
  const begin = <T>(mode: string, work: (tx: Db) => Promise<T>): Promise<T> =>
    client.begin(mode, (connection) => {
      const txSession = new BunSQLSession(connection as never, dialect, schema, session.options);
      const tx = new BunSQLTransaction(dialect, txSession, schema);
      return work(Object.assign(tx, { [ENGINE]: engine }) as unknown as Db);
    }) as Promise<T>;
  const engine: Engine = {
    dialect: "postgresql",
    tables: TABLES,
    migrated,
    async transaction<T>(work: (tx: Db) => Promise<T>, options: { guarded?: boolean } = {}): Promise<T> {
      const mode = `isolation level ${options.guarded ? "read committed" : "serializable"}`;
      for (let attempt = 1; ; attempt++) {
        try {
          return await begin(mode, (handle) => currentTransaction.run(handle, () => work(handle)));
        } catch (error) {
          const state = sqlState(error);
          const retryable =
            (state !== null && RETRYABLE.has(state)) || (!options.guarded && concurrentWriter(error));
          if (attempt >= MAX_ATTEMPTS || !retryable) throw error;
          // Jittered backoff: the transactions that collided should not collide again.
          await Bun.sleep(Math.random() * Math.min(1000, 2 ** attempt));
        }
      }
    },
    snapshot<T>(work: (db: Db) => Promise<T>): Promise<T> {
      // REPEATABLE READ READ ONLY never fails to serialize: no retry needed.
      return begin("isolation level repeatable read read only", work);
    },
    async query<R>(text: string, params: unknown[] = []): Promise<R[]> {
      let n = 0;
      const numbered = text.replace(/\?/g, () => `$${++n}`);
      return (await client.unsafe(numbered, params as never[])) as R[];
    },
    async ping() {
      await client`SELECT 1`;
    },
    // PostgreSQL handles a failed sync itself (it stops and recovers from its WAL).
    writeFailure: () => null,
    async close() {
      await client.close({ timeout: 5 });
    },
  };
  return followingTransactions(Object.assign(root, { [ENGINE]: engine }) as unknown as Db);
}

/**
 * Applies the embedded migrations not yet recorded, in one transaction. A database recording a
 * migration this binary lacks (a newer Herald's) is refused before anything is applied.
 */
async function migrate(client: SQL): Promise<string[]> {
  const migrations = postgresMigrations();
  return client.begin(async (tx) => {
    await tx.unsafe(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
    await tx.unsafe(
      "CREATE TABLE IF NOT EXISTS herald_migrations " +
        "(tag TEXT PRIMARY KEY, hash TEXT NOT NULL, applied_at BIGINT NOT NULL)",
    );
    const rows = (await tx.unsafe("SELECT tag FROM herald_migrations")) as { tag: string }[];
    const applied = new Set(rows.map((r) => r.tag));
    refuseNewerDatabase("the PostgreSQL database (HERALD_DATABASE_URL)", applied, migrations);
    const done: string[] = [];
    for (const m of migrations) {
      if (applied.has(m.tag)) continue;
      for (const statement of m.statements) await tx.unsafe(statement);
      await tx.unsafe("INSERT INTO herald_migrations (tag, hash, applied_at) VALUES ($1, $2, $3)", [
        m.tag,
        m.hash,
        Date.now(),
      ]);
      done.push(m.tag);
    }
    return done;
  });
}
