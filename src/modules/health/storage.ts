// The data directory as /health and /metrics see it: free space and whether it takes writes. A full or
// read-only disk is a warning, not a reason for 503: reads still work and every process on the machine
// shares the disk, so a load balancer draining them all would only add an outage to the fault. Writes
// meanwhile answer 503 with the cause (core/storage-problem.ts).
import { statfsSync } from "node:fs";
import type { Config } from "../../config.ts";
import { writable } from "../../core/storage-problem.ts";

/** Free bytes below which the data directory counts as full (SQLite needs room for its journal). */
export const FULL_BELOW_BYTES = 16 * 1024 * 1024;
/** The share of the file system left free below which its space counts as low. */
export const LOW_BELOW_SHARE = 0.05;
/** statfs and a write probe at most this often per process (/health may be polled every second). */
const CACHE_MS = 5_000;

/** `unused`: nothing is kept in the data directory (PostgreSQL, S3 and HERALD_SECRET_KEY). */
export type StorageState = "ok" | "low" | "full" | "read_only" | "unknown" | "unused";

export interface StorageReport {
  state: StorageState;
  writable: boolean | null;
  free_bytes: number | null;
  total_bytes: number | null;
}

/** What is wrong, for /health's `warnings` (null when nothing is). */
export interface StorageWarning {
  code: "storage_low" | "storage_full" | "storage_read_only" | "storage_unknown";
  detail: string;
}

function measure(dir: string): StorageReport {
  let free: number | null = null;
  let total: number | null = null;
  try {
    const fs = statfsSync(dir);
    free = Number(fs.bavail) * Number(fs.bsize);
    total = Number(fs.blocks) * Number(fs.bsize);
  } catch {
    // The directory is gone or the call is not supported: reported as unknown below.
  }
  const canWrite = free === null ? null : writable(dir);
  const state: StorageState =
    canWrite === null || free === null || total === null
      ? "unknown"
      : !canWrite
        ? "read_only"
        : free < FULL_BELOW_BYTES
          ? "full"
          : total > 0 && free / total < LOW_BELOW_SHARE
            ? "low"
            : "ok";
  return { state, writable: canWrite, free_bytes: free, total_bytes: total };
}

const cache = new Map<string, { at: number; report: StorageReport }>();

const UNUSED: StorageReport = { state: "unused", writable: null, free_bytes: null, total_bytes: null };

/** The data directory's report, measured at most every few seconds. */
export function storageReport(config: Config, now = Date.now()): StorageReport {
  if (config.databaseUrl !== null && config.storage === "s3" && config.secretKey !== null) return UNUSED;
  const dir = config.dataDir;
  const hit = cache.get(dir);
  if (hit && now - hit.at < CACHE_MS) return hit.report;
  const report = measure(dir);
  cache.set(dir, { at: now, report });
  return report;
}

const MIB = 1024 * 1024;

/** The warning a report calls for, or null. */
export function storageWarning(report: StorageReport): StorageWarning | null {
  const free = report.free_bytes === null ? "" : ` (${Math.floor(report.free_bytes / MIB)} MiB free)`;
  switch (report.state) {
    case "read_only":
      return {
        code: "storage_read_only",
        detail: "the data directory refuses writes: changes answer 503 until it is writable again",
      };
    case "full":
      return {
        code: "storage_full",
        detail: `the data directory's disk is full${free}: changes answer 503 until space is freed`,
      };
    case "low":
      return {
        code: "storage_low",
        detail: `less than ${LOW_BELOW_SHARE * 100} % of the data directory's disk is free${free}`,
      };
    case "unknown":
      return { code: "storage_unknown", detail: "the data directory's free space could not be read" };
    default:
      return null;
  }
}
