// A simulated power cut for SQLite files: `herald serve` runs under strace, which records every write
// and sync of every file (with the written bytes, -xx), and after a SIGKILL each database file is
// rebuilt from its bytes before the run plus only the writes issued before that file's last
// fsync/fdatasync: what a disk that honours syncs holds when the power goes (writes not yet synced
// are dropped). The -shm file is left out, as SQLite rebuilds it from the WAL.
import { existsSync, readFileSync } from "node:fs";

/** Syscalls the trace records: the ones that change or sync a file, and opens and closes for context. */
export const TRACED_SYSCALLS = [
  "openat",
  "close",
  "write",
  "pwrite64",
  "writev",
  "pwritev",
  "pwritev2",
  "ftruncate",
  "fallocate",
  "fsync",
  "fdatasync",
  "sync_file_range",
  "unlink",
  "unlinkat",
  "rename",
  "renameat",
  "renameat2",
];

/** strace in front of a command: every thread, fds shown with their paths, whole buffers in hex. */
export function straceCommand(strace: string, log: string, command: string[]): string[] {
  return [
    strace,
    "-f",
    "--seccomp-bpf",
    "-y",
    "-xx",
    "-s",
    "1048576",
    "-e",
    `trace=${TRACED_SYSCALLS.join(",")}`,
    "-o",
    log,
    "--",
    ...command,
  ];
}

/** One change or sync of a file, in the order the process issued them. */
type FileOperation =
  | { kind: "pwrite"; offset: number; data: Buffer; inFlight: boolean }
  | { kind: "truncate"; length: number }
  | { kind: "sync" };

/** Decodes strace's -xx text ("\x2f\x74…"). */
function unhex(text: string): Buffer {
  return Buffer.from(text.replaceAll("\\x", ""), "hex");
}

/**
 * The operations on each of `paths` from a finished strace log, in order. Anything that would change
 * those files in a way this model does not replay (a plain write, a vectored write, a rename …)
 * fails loudly rather than making an unfaithful copy.
 */
export function fileOperations(log: string, paths: string[]): Map<string, FileOperation[]> {
  const operations = new Map(paths.map((path) => [path, [] as FileOperation[]]));
  // Calls in the order they began (a sync on one thread and a write on another are ordered by when
  // each was issued); a call interrupted in the log is completed by its "resumed" line, and one the
  // kill cut short keeps "?" as its result.
  const calls: string[] = [];
  const pending = new Map<string, number>(); // pid → its interrupted call
  for (const raw of readFileSync(log, "utf8").split("\n")) {
    const split = /^(\d+) +(.*)$/.exec(raw);
    if (!split) continue;
    const [, pid, rest] = split as unknown as [string, string, string];
    if (rest.endsWith(" <unfinished ...>")) {
      pending.set(pid, calls.push(`${rest.slice(0, -" <unfinished ...>".length)}) = ?`) - 1);
      continue;
    }
    const resumed = /^<\.\.\. \w+ resumed>(.*)$/.exec(rest);
    const index = pending.get(pid);
    if (resumed && index !== undefined) {
      calls[index] = calls[index]!.slice(0, -") = ?".length) + resumed[1];
      pending.delete(pid);
    } else if (!resumed) calls.push(rest);
  }
  for (const line of calls) {
    const byName = /^(openat|unlink|unlinkat|rename|renameat|renameat2)\((.*)\) += (-?\d+|\?)/.exec(line);
    if (byName) {
      const named = [...byName[2]!.matchAll(/"((?:\\x[0-9a-f]{2})*)"/g)].map((m) =>
        unhex(m[1]!).toString("utf8"),
      );
      const touched = named.find((name) => operations.has(name));
      const truncates = byName[1] === "openat" && byName[2]!.includes("O_TRUNC");
      if (touched && !byName[3]!.startsWith("-") && (byName[1] !== "openat" || truncates))
        throw new Error(`${byName[1]} of ${touched} is not modelled by the power-cut replay`);
      continue;
    }
    const call = /^(\w+)\((\d+)<((?:\\x[0-9a-f]{2})*)>(?:, (.*))?\) += (-?\d+|\?)/.exec(line);
    if (!call) continue;
    const [, name, , pathHex, args, result] = call as unknown as [
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    const path = unhex(pathHex).toString("utf8");
    const list = operations.get(path);
    if (!list || result.startsWith("-")) continue;
    // Cut short by the kill: a write may have reached the page cache (kept for the whole-file check,
    // never counted as synced); a sync that never returned synced nothing anyone heard of.
    const inFlight = result === "?";
    if (name === "pwrite64") {
      const write = /^"((?:\\x[0-9a-f]{2})*)"(\.\.\.)?, (\d+), (\d+)$/.exec(args ?? "");
      if (!write || write[2])
        throw new Error(`pwrite64 to ${path} not recorded whole: ${line.slice(0, 200)}`);
      const data = unhex(write[1]!);
      if (data.length !== Number(write[3]) || (!inFlight && data.length !== Number(result)))
        throw new Error(`a short pwrite64 to ${path} (${result} of ${write[3]} bytes): not modelled`);
      list.push({ kind: "pwrite", offset: Number(write[4]), data, inFlight });
    } else if (name === "ftruncate") {
      list.push({ kind: "truncate", length: Number(args) });
    } else if (name === "fsync" || name === "fdatasync") {
      if (!inFlight) list.push({ kind: "sync" });
    } else if (name !== "close") {
      throw new Error(`${name} on ${path} is not modelled by the power-cut replay: ${line.slice(0, 200)}`);
    }
  }
  return operations;
}

/**
 * What `path` holds after a power cut: its bytes before the traced run (`before`, null when it did
 * not exist) with the operations issued before its last sync applied in order; later ones are lost.
 * `completed` applies every write that returned, `issued` also those the kill cut short (which may or
 * may not have happened): what the file holds without a power cut, which the test compares with the
 * real file to show the trace missed no write.
 */
export function durableBytes(
  before: Buffer | null,
  operations: FileOperation[],
  upTo: "synced" | "completed" | "issued" = "synced",
): Buffer {
  const end =
    upTo === "synced" ? operations.findLastIndex((op) => op.kind === "sync") + 1 : operations.length;
  let bytes = Buffer.from(before ?? Buffer.alloc(0));
  for (const op of operations.slice(0, end)) {
    if (op.kind === "pwrite" && (upTo === "issued" || !op.inFlight)) {
      const end = op.offset + op.data.length;
      if (end > bytes.length) bytes = Buffer.concat([bytes, Buffer.alloc(end - bytes.length)]);
      op.data.copy(bytes, op.offset);
    } else if (op.kind === "truncate") {
      bytes =
        op.length <= bytes.length
          ? bytes.subarray(0, op.length)
          : Buffer.concat([bytes, Buffer.alloc(op.length - bytes.length)]);
    }
  }
  return bytes;
}

/** A file's bytes now, or null when it does not exist. */
export function bytesOf(path: string): Buffer | null {
  return existsSync(path) ? readFileSync(path) : null;
}
