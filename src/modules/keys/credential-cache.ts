import { engineOf, type Db } from "../../db/engine.ts";
import { afterCommit } from "../../db/transaction.ts";
import { findCredential, type Credential } from "./repo.ts";

/**
 * How long a process keeps a key's credential after reading it, counted from before the read: a key
 * revoked, a member removed or a workspace changed by another process stops working here within this
 * window (and in the process that made the change at once, see `forgetCredentials`). Half of the
 * second the issue allows, so a read that overlaps the change still fits in it.
 */
export const CREDENTIAL_TTL_MS = 500;

/** More entries than this (keys × workspaces asked for within the window) and the cache starts over. */
const MAX_ENTRIES = 10_000;

interface Entry {
  credential: Credential;
  /** `performance.now()` after which the entry is read again (a monotonic clock: tests move `h.clock`). */
  freshUntil: number;
}

/** One cache per database engine (per Herald: two servers in one test process do not share one). */
class CredentialCache {
  readonly entries = new Map<string, Entry>();
  /** Bumped by every forget: a read that started before it does not fill the cache afterwards. */
  generation = 0;
}

const caches = new WeakMap<object, CredentialCache>();

function cacheOf(db: Db): CredentialCache {
  const engine = engineOf(db);
  let cache = caches.get(engine);
  if (!cache) caches.set(engine, (cache = new CredentialCache()));
  return cache;
}

/**
 * `findCredential`, answered from this process's recent reads: a key that authenticates every request
 * costs one statement per key and workspace each `CREDENTIAL_TTL_MS`, not one per request. Only found
 * keys with their workspace found are kept; unknown keys and workspaces are read every time.
 */
export async function cachedCredential(
  db: Db,
  secretHash: string,
  workspaceId: string,
): Promise<Credential | null> {
  const cache = cacheOf(db);
  const name = `${secretHash}/${workspaceId}`;
  const started = performance.now();
  const entry = cache.entries.get(name);
  if (entry && entry.freshUntil > started) return entry.credential;
  const generation = cache.generation;
  const credential = await findCredential(db, secretHash, workspaceId);
  if (credential && (workspaceId === "" || credential.workspace) && generation === cache.generation) {
    if (cache.entries.size >= MAX_ENTRIES) cache.entries.clear();
    cache.entries.set(name, { credential, freshUntil: started + CREDENTIAL_TTL_MS });
  } else if (entry) cache.entries.delete(name);
  return credential;
}

/**
 * Drops this process's cached credentials once the transaction open on `db` commits (at once outside
 * one): the repository functions that change what a credential reads (a key revoked, its workspaces,
 * a workspace, an account removed) call it, so the process that made a change never answers from
 * before it. Reads that started earlier do not fill the cache after it (the generation moved on).
 */
export function forgetCredentials(db: Db): void {
  const cache = cacheOf(db);
  afterCommit(db, () => {
    cache.generation++;
    cache.entries.clear();
  });
}
