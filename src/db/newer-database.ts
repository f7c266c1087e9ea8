import { ConfigError } from "../config.ts";
import { HERALD_VERSION } from "../herald.ts";

/**
 * A database whose `herald_migrations` records migrations this binary does not carry: a newer Herald
 * migrated it. Its code would not match that schema (it would start, then fail on the first query
 * touching what changed), so no command opens it. A ConfigError: the operator's matter, printed
 * without a stack trace, exit 1.
 */
export class NewerDatabaseError extends ConfigError {
  constructor(
    readonly database: string,
    readonly unknown: string[],
    lastKnown: string | null,
  ) {
    const their = unknown.length === 1 ? `migration ${unknown[0]}` : `migrations ${unknown.join(", ")}`;
    super(
      `${database} was upgraded by a newer Herald: it has ${their}, which this binary ` +
        `(Herald ${HERALD_VERSION}, last migration ${lastKnown ?? "none"}) does not know. Nothing was ` +
        "changed, and this version does not start on it.\n" +
        "Run the newer Herald binary again, or, to go back to this version, restore the backup taken " +
        "before the upgrade with this binary into an empty data directory (on PostgreSQL, an empty " +
        'database); see docs/operations.md, "Upgrading".',
    );
  }
}

/**
 * Throws NewerDatabaseError when `applied` (the tags in `herald_migrations`) names a migration that
 * `embedded` lacks. Runs inside the migrate transaction, before any migration is applied. A known tag
 * whose file changed (another hash) is not checked: its recorded hash is never compared.
 */
export function refuseNewerDatabase(
  database: string,
  applied: Iterable<string>,
  embedded: readonly { tag: string }[],
): void {
  const known = new Set(embedded.map((m) => m.tag));
  const unknown = [...applied].filter((tag) => !known.has(tag)).sort();
  if (unknown.length > 0) throw new NewerDatabaseError(database, unknown, embedded.at(-1)?.tag ?? null);
}
