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
  /** The read, shared by the requests that arrive while it runs (64 at once would each read otherwise). */
  credential: Promise<Credential | null>;
  /** `performance.now()` after which the entry is read again (a monotonic clock: tests move `h.clock`). */
  freshUntil: number;
}

/** One cache per database engine (per Herald: two servers in one test process do not share one). */
class CredentialCache {
  readonly entries = new Map<string, Entry>();
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
 * keys with their workspace found are kept; unknown keys and workspaces are read again next time.
 */
export function cachedCredential(
  db: Db,
  secretHash: string,
  workspaceId: string,
): Promise<Credential | null> {
  const cache = cacheOf(db);
  const name = `${secretHash}/${workspaceId}`;
  const started = performance.now();
  const cached = cache.entries.get(name);
  if (cached && cached.freshUntil > started) return cached.credential;
  if (cache.entries.size >= MAX_ENTRIES) cache.entries.clear();
  const credential = findCredential(db, secretHash, workspaceId);
  const entry: Entry = { credential, freshUntil: started + CREDENTIAL_TTL_MS };
  cache.entries.set(name, entry);
  const drop = () => {
    if (cache.entries.get(name) === entry) cache.entries.delete(name);
  };
  // A forget while the read ran cleared the map (the entry is gone); a miss or a failure is not kept.
  credential.then((found) => {
    if (!found || (workspaceId !== "" && !found.workspace)) drop();
  }, drop);
  return credential;
}

/**
 * Drops this process's cached credentials once the transaction open on `db` commits (at once outside
 * one): the repository functions that change what a credential reads (a key revoked, its workspaces,
 * a workspace, an unconfirmed address, an account removed) call it, so the process that made a change
 * never answers from before it. A read still running is dropped with the rest: a request arriving
 * after the commit reads again.
 */
export function forgetCredentials(db: Db): void {
  const cache = cacheOf(db);
  afterCommit(db, () => cache.entries.clear());
}
