// The export file (docs/operations.md): JSON lines. First a header, then one line per row in
// foreign-key order, then (local storage) the blobs in chunks, then a trailer with the counts, so a
// file cut short is noticed. Every line is small except blob chunks (≤ 1 MiB of bytes each).
import type { SecretBox } from "../../lib/crypto.ts";
import type { Dialect } from "../../db/engine.ts";
import type { CatalogTable } from "./repo.ts";

export const FORMAT = "herald-export";
export const FORMAT_VERSION = 1;

/** Bytes of a blob per line (before base64). */
export const BLOB_CHUNK_BYTES = 1024 * 1024;

/** The first line. */
export interface Header {
  format: typeof FORMAT;
  version: number;
  /** The Herald version that wrote the file. */
  herald: string;
  /** The engine the rows were read from. */
  dialect: Dialect;
  /** HERALD_STORAGE of the source; blobs are in the file only when it is `local`. */
  storage: "local" | "s3";
  blobs: boolean;
  /** A MAC made with the source's secret key: the target must hold the same key. */
  secret_check: string;
  tables: { name: string; columns: string[] }[];
}

/** A row: the table's name and its columns by database name, values as drizzle reads them. */
export interface RowLine {
  t: string;
  r: Record<string, unknown>;
}

/** A piece of a blob: its key and base64 bytes. The chunks of one blob follow one another. */
export interface BlobLine {
  b: string;
  d: string;
}

/** The last line. */
export interface Trailer {
  end: { rows: Record<string, number>; blobs: number; blob_bytes: number };
}

/** A refused or failed transfer: printed as one line (exit code 1). */
export class TransferError extends Error {}

/** Proves the key without revealing it: a MAC of a fixed text under the master key. */
export function secretCheck(secrets: SecretBox): string {
  return secrets.sign("transfer", "herald-export-secret-check");
}

/** The table list of a header. */
export function tableList(tables: CatalogTable[]): Header["tables"] {
  return tables.map((t) => ({ name: t.name, columns: t.columns.map((c) => c.name) }));
}

/** Rows start with this (JSON.stringify keeps key order), so passes that skip rows need not parse them. */
export const ROW_PREFIX = '{"t":';
export const BLOB_PREFIX = '{"b":';
