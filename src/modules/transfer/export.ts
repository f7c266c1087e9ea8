// `herald export`: the whole installation (every table, and local blobs) into one JSON-lines file.
import { existsSync } from "node:fs";
import { link, unlink } from "node:fs/promises";
import { BlobError, type BlobStore } from "../../blobs/store.ts";
import { engineOf, type Db } from "../../db/engine.ts";
import type { Herald } from "../../herald.ts";
import { hasAnyAccount } from "../account/repo.ts";
import { catalog, rowsOf, type CatalogTable } from "./repo.ts";
import { LineWriter } from "./files.ts";
import {
  BLOB_CHUNK_BYTES,
  FORMAT,
  FORMAT_VERSION,
  secretCheck,
  tableList,
  TransferError,
  type Header,
  type Trailer,
} from "./format.ts";
import { inSnapshot } from "./snapshot.ts";

/** Rows read per query (pages follow the primary key). */
const PAGE_ROWS = 1000;

/** What an export wrote. */
export interface ExportSummary {
  file: string;
  dialect: Header["dialect"];
  storage: Header["storage"];
  rows: Record<string, number>;
  totalRows: number;
  blobsIncluded: boolean;
  blobs: number;
  blobBytes: number;
  /** Blob keys that asset rows name but the store does not hold (left out of the file). */
  missingBlobs: string[];
}

/**
 * Writes the installation `h` opens to `file`, which must not exist. The file appears only when it
 * is complete (it is written under another name and linked into place).
 */
export async function exportInstallation(
  h: Herald,
  file: string,
  options: { pageRows?: number } = {},
): Promise<ExportSummary> {
  if (existsSync(file)) throw new TransferError(`${file} exists; choose another file name or remove it`);
  const tables = catalog(h.db);
  const blobsIncluded = h.blobs.kind === "local";
  const temporary = `${file}.partial-${process.pid}`;
  const out = await LineWriter.create(temporary);
  try {
    const header: Header = {
      format: FORMAT,
      version: FORMAT_VERSION,
      herald: h.version,
      dialect: engineOf(h.db).dialect,
      storage: h.blobs.kind,
      blobs: blobsIncluded,
      secret_check: secretCheck(h.secrets),
      tables: tableList(tables),
    };
    await out.write(JSON.stringify(header));
    const { rows, blobKeys } = await inSnapshot(h.db, async (db) => {
      if (!(await hasAnyAccount(db)))
        throw new TransferError(
          "the installation has no account: nothing to export (check the configuration)",
        );
      return writeRows(db, tables, out, options.pageRows ?? PAGE_ROWS);
    });
    const blobs = blobsIncluded ? await writeBlobs(h.blobs, blobKeys, out) : null;
    const trailer: Trailer = { end: { rows, blobs: blobs?.count ?? 0, blob_bytes: blobs?.bytes ?? 0 } };
    await out.write(JSON.stringify(trailer));
    await out.close();
    await publish(temporary, file);
    return {
      file,
      dialect: header.dialect,
      storage: header.storage,
      rows,
      totalRows: Object.values(rows).reduce((a, b) => a + b, 0),
      blobsIncluded,
      blobs: blobs?.count ?? 0,
      blobBytes: blobs?.bytes ?? 0,
      missingBlobs: blobs?.missing ?? [],
    };
  } catch (error) {
    await out.abandon();
    await unlink(temporary).catch(() => {});
    throw error;
  }
}

/** Links the finished file into place (refusing to replace a file made meanwhile). */
async function publish(temporary: string, file: string): Promise<void> {
  try {
    await link(temporary, file);
  } catch (error) {
    if ((error as { code?: string }).code === "EEXIST")
      throw new TransferError(`${file} appeared while exporting; choose another file name`);
    throw error;
  }
  await unlink(temporary);
}

/** Every row of every table, in order; returns the counts and the blob keys asset rows name. */
async function writeRows(db: Db, tables: CatalogTable[], out: LineWriter, pageRows: number) {
  const rows: Record<string, number> = {};
  const blobKeys = new Set<string>();
  for (const table of tables) {
    rows[table.name] = 0;
    for await (const row of rowsOf(db, table, pageRows)) {
      const record: Record<string, unknown> = {};
      for (const c of table.columns) record[c.name] = row[c.key];
      await out.write(JSON.stringify({ t: table.name, r: record }));
      rows[table.name]!++;
      if (table.name === "assets" && typeof row.blobKey === "string") blobKeys.add(row.blobKey);
    }
  }
  return { rows, blobKeys };
}

/** The blobs, sorted by key, each as consecutive chunk lines (one empty chunk for an empty blob). */
async function writeBlobs(store: BlobStore, keys: Set<string>, out: LineWriter) {
  let count = 0;
  let bytes = 0;
  const missing: string[] = [];
  for (const key of [...keys].sort()) {
    // A deleted asset's bytes may be gone already (the cleanup job clears its blob key afterwards).
    const stream = await store.read(key).catch((error: unknown) => {
      if (error instanceof BlobError && error.code === "not_found") return null;
      throw error;
    });
    if (!stream) {
      missing.push(key);
      continue;
    }
    count++;
    bytes += await writeBlob(key, stream, out);
  }
  return { count, bytes, missing };
}

async function writeBlob(key: string, stream: ReadableStream<Uint8Array>, out: LineWriter): Promise<number> {
  const buffer = Buffer.allocUnsafe(BLOB_CHUNK_BYTES);
  let used = 0;
  let total = 0;
  let lines = 0;
  const emit = async () => {
    await out.write(JSON.stringify({ b: key, d: buffer.toString("base64", 0, used) }));
    total += used;
    used = 0;
    lines++;
  };
  for await (const chunk of stream) {
    let offset = 0;
    while (offset < chunk.byteLength) {
      const take = Math.min(chunk.byteLength - offset, BLOB_CHUNK_BYTES - used);
      buffer.set(chunk.subarray(offset, offset + take), used);
      used += take;
      offset += take;
      if (used === BLOB_CHUNK_BYTES) await emit();
    }
  }
  if (used > 0 || lines === 0) await emit();
  return total;
}
