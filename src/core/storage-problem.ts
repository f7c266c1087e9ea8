import { closeSync, openSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ProblemError } from "./problem.ts";

/**
 * Why Herald's storage cannot serve a request right now: the disk is full, the data directory is
 * read-only, the disk answers with I/O errors, or the PostgreSQL server cannot be reached (restarting,
 * down, out of connections). None of these is the caller's mistake nor a bug: a request meeting one
 * is 503 `public_unavailable` with a detail that names the cause (docs/reliability.md).
 */
export type StorageFault = "full" | "read_only" | "io" | "unreachable";

// SQLite's primary result codes (Bun reports extended ones, e.g. SQLITE_IOERR_WRITE, by prefix).
const SQLITE: [string, StorageFault][] = [
  ["SQLITE_FULL", "full"],
  ["SQLITE_READONLY", "read_only"],
  ["SQLITE_IOERR", "io"],
  ["SQLITE_CANTOPEN", "io"],
];

// Local files (blobs, uploads): the system's error codes.
const SYSTEM: Record<string, StorageFault> = {
  ENOSPC: "full",
  EDQUOT: "full",
  EROFS: "read_only",
  EIO: "io",
};

/** PostgreSQL SQLSTATEs: disk full, read-only transaction, I/O error, shutting down or starting up. */
function fromSqlState(state: string): StorageFault | null {
  if (state === "53100") return "full";
  if (state === "25006") return "read_only";
  if (state === "58030") return "io";
  // Class 08: connection exceptions; 57P01–57P03: the server shuts down or is not ready; 53300: too
  // many connections.
  if (state.startsWith("08") || /^57P0[123]$/.test(state) || state === "53300") return "unreachable";
  return null;
}

/**
 * The storage fault behind `error` (or an error it wraps, as drizzle's "Failed query"), or null.
 * SQLite reports a write refused by a read-only file system as an I/O error: with `dataDir` given,
 * a directory that refuses writes turns that into `read_only`.
 */
export function storageFault(error: unknown, dataDir?: string): StorageFault | null {
  const fault = classify(error);
  if (fault === "io" && dataDir !== undefined && !writable(dataDir)) return "read_only";
  return fault;
}

/**
 * Whether a file can be created in `dir` (created and removed at once): access(2) does not see every
 * read-only state (ext4's emergency read-only after a disk error keeps the mount flags), a write does.
 * Only a refusal counts: a missing directory or a full disk is not "read-only".
 */
export function writable(dir: string): boolean {
  const probe = join(dir, `.herald-write-probe-${process.pid}`);
  try {
    closeSync(openSync(probe, "wx"));
    rmSync(probe, { force: true });
    return true;
  } catch (error) {
    const code = (error as { code?: string }).code;
    return code !== "EROFS" && code !== "EACCES" && code !== "EPERM";
  }
}

function classify(error: unknown): StorageFault | null {
  let e: unknown = error;
  for (let depth = 0; depth < 5 && e && typeof e === "object"; depth++) {
    const { code, errno } = e as { code?: unknown; errno?: unknown };
    if (typeof code === "string") {
      for (const [prefix, fault] of SQLITE) if (code.startsWith(prefix)) return fault;
      if (SYSTEM[code]) return SYSTEM[code]!;
      // Bun.SQL's own codes for a connection that failed, closed or timed out.
      if (/^ERR_POSTGRES_(CONNECTION_|IDLE_TIMEOUT|LIFETIME_TIMEOUT)/.test(code)) return "unreachable";
    }
    if (typeof errno === "string" && /^[0-9A-Z]{5}$/.test(errno)) {
      const fault = fromSqlState(errno);
      if (fault) return fault;
    }
    e = (e as { cause?: unknown }).cause;
  }
  return null;
}

const DETAILS: Record<StorageFault, string> = {
  full:
    "Herald's storage is full, so this change could not be saved. Reads still work; " +
    "send the request again once an operator has freed space.",
  read_only:
    "Herald's data directory is read-only, so this change could not be saved. Reads still work; " +
    "send the request again once an operator has made it writable.",
  io:
    "Herald's storage reported an I/O error, so this change could not be saved. " +
    "Send the request again later.",
  unreachable:
    "Herald cannot reach its database right now (it may be restarting). Send the request again in a few " +
    "seconds; with the same Idempotency-Key it is never done twice.",
};

/** Seconds a client waits before trying again: a restart is quick, an operator's fix is not. */
const RETRY_AFTER: Record<StorageFault, number> = { full: 30, read_only: 30, io: 30, unreachable: 5 };

/** 503 `public_unavailable` naming the storage fault behind `error`; null for any other error. */
export function storageProblem(error: unknown, dataDir?: string): ProblemError | null {
  const fault = storageFault(error, dataDir);
  if (!fault) return null;
  return new ProblemError("public_unavailable", DETAILS[fault], { retryAfter: RETRY_AFTER[fault] });
}
