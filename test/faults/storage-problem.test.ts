// Which errors are storage faults (503 naming the cause) and which stay bugs (500): the codes SQLite,
// the system and PostgreSQL (Bun.SQL) report, also wrapped as drizzle wraps them.
import { expect, test } from "bun:test";
import { storageFault, storageProblem } from "../../src/core/storage-problem.ts";

function error(fields: Record<string, unknown>, message = "failed"): Error {
  return Object.assign(new Error(message), fields);
}

const CASES: [string, unknown, string | null][] = [
  ["SQLite: disk full", error({ code: "SQLITE_FULL" }), "full"],
  ["SQLite: read-only database", error({ code: "SQLITE_READONLY" }), "read_only"],
  ["SQLite: read-only, extended code", error({ code: "SQLITE_READONLY_DBMOVED" }), "read_only"],
  ["SQLite: write I/O error", error({ code: "SQLITE_IOERR_WRITE" }), "io"],
  ["SQLite: cannot open", error({ code: "SQLITE_CANTOPEN" }), "io"],
  ["SQLite: a constraint is a bug, not storage", error({ code: "SQLITE_CONSTRAINT_UNIQUE" }), null],
  ["SQLite: busy is not storage", error({ code: "SQLITE_BUSY" }), null],
  ["file: no space", error({ code: "ENOSPC" }), "full"],
  ["file: quota", error({ code: "EDQUOT" }), "full"],
  ["file: read-only file system", error({ code: "EROFS" }), "read_only"],
  ["file: not found is not storage", error({ code: "ENOENT" }), null],
  ["PostgreSQL: connection closed", error({ code: "ERR_POSTGRES_CONNECTION_CLOSED" }), "unreachable"],
  ["PostgreSQL: connection refused", error({ code: "ERR_POSTGRES_CONNECTION_REFUSED" }), "unreachable"],
  ["PostgreSQL: admin shutdown", error({ code: "ERR_POSTGRES_SERVER_ERROR", errno: "57P01" }), "unreachable"],
  ["PostgreSQL: starting up", error({ code: "ERR_POSTGRES_SERVER_ERROR", errno: "57P03" }), "unreachable"],
  ["PostgreSQL: disk full", error({ errno: "53100" }), "full"],
  ["PostgreSQL: read-only transaction", error({ errno: "25006" }), "read_only"],
  ["PostgreSQL: unique violation is a bug", error({ errno: "23505" }), null],
  ["PostgreSQL: serialization failure is not storage", error({ errno: "40001" }), null],
  [
    "drizzle wraps the driver's error",
    error({ cause: error({ code: "ERR_POSTGRES_CONNECTION_CLOSED" }) }),
    "unreachable",
  ],
  ["a plain bug", new TypeError("x is undefined"), null],
  ["not an error at all", "boom", null],
];

test.each(CASES)("%s", (_name, thrown, fault) => {
  expect(storageFault(thrown)).toBe(fault as never);
  const problem = storageProblem(thrown);
  if (fault === null) expect(problem).toBeNull();
  else
    expect({ status: problem?.status, code: problem?.code, retryable: problem?.retryable }).toEqual({
      status: 503,
      code: "public_unavailable",
      retryable: true,
    });
});

// An I/O error in a directory that refuses writes (read_only) is exercised in storage.test.ts.
test("a client waits longer for an operator than for a database restart", () => {
  expect(storageFault(error({ code: "SQLITE_IOERR_WRITE" }), "/tmp")).toBe("io");
  expect(storageProblem(error({ code: "SQLITE_FULL" }))?.retryAfter).toBe(30);
  expect(storageProblem(error({ code: "ERR_POSTGRES_CONNECTION_CLOSED" }))?.retryAfter).toBe(5);
});
