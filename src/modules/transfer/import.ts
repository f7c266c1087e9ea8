// `herald import`: an export file into an empty installation. Three passes over the file: check it
// whole (nothing is written for a damaged or foreign file), write the blobs into the target's store,
// then insert every row in one transaction, so a failed import leaves the database empty.
import { isValidBlobKey, type BlobStore } from "../../blobs/store.ts";
import { isPostgres, type Db } from "../../db/engine.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import {
  advanceIdentities,
  catalog,
  countRows,
  deleteRows,
  insertRowBatch,
  type CatalogTable,
} from "./repo.ts";
import { openBlobSink, type BlobSink } from "./blob-sinks.ts";
import { readLines } from "./files.ts";
import {
  BLOB_PREFIX,
  FORMAT,
  FORMAT_VERSION,
  ROW_PREFIX,
  secretCheck,
  tableList,
  TransferError,
  type Header,
  type Trailer,
} from "./format.ts";

/** Bound parameters per INSERT (SQLite allows 32,766; PostgreSQL 65,535). */
const MAX_PARAMETERS = 30_000;
const MAX_BATCH_ROWS = 300;

/** What an import did. */
export interface ImportSummary {
  source: Pick<Header, "herald" | "dialect" | "storage" | "blobs">;
  rows: Record<string, number>;
  totalRows: number;
  blobs: number;
  blobBytes: number;
  /** Ready assets whose bytes the target's store lacks (only with `allowMissingBlobs`). */
  missingBlobs: string[];
}

/** A ready, not deleted asset: its bytes must be in the target's store after the import. */
interface ExpectedBlob {
  key: string;
  size: number;
}

/** What the checking pass learned. */
interface Checked {
  header: Header;
  trailer: Trailer["end"];
  expected: ExpectedBlob[];
  /** Bytes of each blob in the file. */
  blobSizes: Map<string, number>;
}

/** Imports `file` into the installation `h` opens, which must hold no data. */
export async function importInstallation(
  h: Herald,
  file: string,
  options: { allowMissingBlobs?: boolean } = {},
): Promise<ImportSummary> {
  const tables = catalog(h.db);
  await refuseUnlessEmpty(h.db, tables);
  const { header, trailer, expected, blobSizes } = await checkFile(file, tables, h);
  if (header.blobs) await writeBlobs(file, h.blobs, blobSizes);
  const missing = await missingBlobs(h.blobs, expected);
  if (missing.length > 0 && !options.allowMissingBlobs) {
    throw new TransferError(
      `${missing.length} ready asset(s) have no bytes in the target's ${h.blobs.kind} store ` +
        `(first: ${missing[0]}); ${header.blobs ? "" : "the file holds no blobs (the source used S3): "}` +
        "make the objects available there, or pass --allow-missing-blobs",
    );
  }
  await inTransaction(h.db, async (tx) => {
    // Again inside the transaction: a server started on the target meanwhile may have written.
    await refuseUnlessEmpty(tx, tables);
    for (const t of tables) if (SERVER_STATE_TABLES.has(t.name)) await deleteRows(tx, t);
    await insertRows(tx, file, tables);
  });
  if (isPostgres(h.db)) await advanceIdentities(h.db, tables);
  return {
    source: { herald: header.herald, dialect: header.dialect, storage: header.storage, blobs: header.blobs },
    rows: trailer.rows,
    totalRows: Object.values(trailer.rows).reduce((a, b) => a + b, 0),
    blobs: trailer.blobs,
    blobBytes: trailer.blob_bytes,
    missingBlobs: missing,
  };
}

/**
 * Tables a server fills on its own when it starts (when billing was switched on; the setup link of an
 * empty installation): not content, so a target that was started once still counts as empty, and the
 * file's rows replace them.
 */
const SERVER_STATE_TABLES = new Set(["billing_installation", "installation_settings"]);

/** Refuses a target that holds any row (an import never merges). */
async function refuseUnlessEmpty(db: Db, tables: CatalogTable[]): Promise<void> {
  const filled: string[] = [];
  for (const t of tables) {
    if (SERVER_STATE_TABLES.has(t.name)) continue;
    const n = await countRows(db, t);
    if (n > 0) filled.push(`${t.name}: ${n}`);
  }
  if (filled.length > 0)
    throw new TransferError(
      `the target installation is not empty (${filled.slice(0, 3).join(", ")}` +
        `${filled.length > 3 ? ", …" : ""}); ` +
        "import needs a fresh HERALD_DATA_DIR or database",
    );
}

/** Parses one line, naming it when it is not JSON. */
function parseLine(file: string, n: number, line: string): Record<string, unknown> {
  try {
    const value = JSON.parse(line) as unknown;
    if (value && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {}
  throw new TransferError(`${file} is damaged or truncated: line ${n} is not a line of a Herald export`);
}

/** Checks the header against this Herald and the target's secret key. */
function checkHeader(
  file: string,
  header: Record<string, unknown>,
  tables: CatalogTable[],
  h: Herald,
): Header {
  if (header.format !== FORMAT) throw new TransferError(`${file} is not a Herald export (no header)`);
  if (header.version !== FORMAT_VERSION)
    throw new TransferError(
      `${file} has format version ${String(header.version)}; ` +
        `this Herald (${h.version}) reads version ${FORMAT_VERSION}`,
    );
  if (JSON.stringify(header.tables) !== JSON.stringify(tableList(tables)))
    throw new TransferError(
      `${file} was exported by Herald ${String(header.herald)}, whose tables differ from this Herald's ` +
        `(${h.version}); import it with the version that exported it`,
    );
  if (header.secret_check !== secretCheck(h.secrets))
    throw new TransferError(
      "the target's secret key is not the one the export was made with; set HERALD_SECRET_KEY " +
        "(or <HERALD_DATA_DIR>/secret.key) to the source's key",
    );
  return header as unknown as Header;
}

/**
 * The checking pass: the header, rows in table order with exactly the table's columns, blobs after
 * the rows, and a trailer whose counts match, last. Remembers the blobs ready assets need.
 */
async function checkFile(file: string, tables: CatalogTable[], h: Herald): Promise<Checked> {
  const index = new Map(tables.map((t, i) => [t.name, i]));
  const rows: Record<string, number> = Object.fromEntries(tables.map((t) => [t.name, 0]));
  const blobSizes = new Map<string, number>();
  const expected: ExpectedBlob[] = [];
  let header: Header | null = null;
  let trailer: Trailer["end"] | null = null;
  let tableAt = 0;
  let blobKey: string | null = null;
  let blobBytes = 0;
  let n = 0;
  const damaged = (why: string) => new TransferError(`${file} is damaged: line ${n} ${why}`);
  for await (const line of linesOf(file)) {
    n++;
    const value = parseLine(file, n, line);
    if (n === 1) {
      header = checkHeader(file, value, tables, h);
      continue;
    }
    if (trailer) throw damaged("follows the last line");
    if (typeof value.t === "string" && line.startsWith(ROW_PREFIX)) {
      const at = index.get(value.t);
      if (at === undefined || at < tableAt || blobKey !== null) throw damaged(`is a row out of place`);
      tableAt = at;
      checkColumns(tables[at]!, value.r, damaged);
      rows[value.t]!++;
      if (value.t === "assets") noteAsset(value.r as Record<string, unknown>, expected);
    } else if (typeof value.b === "string" && typeof value.d === "string" && line.startsWith(BLOB_PREFIX)) {
      if (!header!.blobs || !isValidBlobKey(value.b)) throw damaged("is a blob this file cannot hold");
      const bytes = base64Bytes(value.d);
      if (bytes === null) throw damaged("is a blob chunk that is not base64");
      if (value.b !== blobKey) {
        if (blobSizes.has(value.b)) throw damaged("continues a blob that ended before");
        blobKey = value.b;
      }
      blobSizes.set(blobKey, (blobSizes.get(blobKey) ?? 0) + bytes);
      blobBytes += bytes;
    } else if (value.end && typeof value.end === "object") {
      trailer = value.end as Trailer["end"];
    } else throw damaged("is not a row, a blob or the last line");
  }
  if (!header) throw new TransferError(`${file} is empty`);
  if (!trailer)
    throw new TransferError(`${file} is truncated: it ends after line ${n}, before its last line`);
  const counted = { rows, blobs: blobSizes.size, blob_bytes: blobBytes };
  if (JSON.stringify(counted) !== JSON.stringify(trailer))
    throw new TransferError(`${file} is damaged: its contents do not match the counts of its last line`);
  return { header, trailer, expected, blobSizes };
}

/** Bytes a base64 text decodes to, or null when it is not base64 (decoding skips what is not). */
function base64Bytes(text: string): number | null {
  if (text.length % 4 !== 0) return null;
  const bytes = (text.length / 4) * 3 - (text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0);
  return Buffer.from(text, "base64").byteLength === bytes ? bytes : null;
}

function checkColumns(table: CatalogTable, record: unknown, damaged: (why: string) => TransferError): void {
  if (!record || typeof record !== "object") throw damaged("has no columns");
  const names = Object.keys(record);
  if (names.length !== table.columns.length || table.columns.some((c) => !(c.name in record)))
    throw damaged(`does not have the columns of ${table.name}`);
}

function noteAsset(record: Record<string, unknown>, expected: ExpectedBlob[]): void {
  const key = record.blob_key;
  if (record.status === "ready" && record.deleted_at === null && typeof key === "string")
    expected.push({ key, size: Number(record.byte_size) });
}

/** The file's lines, with a missing file as a one-line error. */
async function* linesOf(file: string): AsyncGenerator<string> {
  try {
    yield* readLines(file);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "ENOENT" || code === "EACCES" || code === "EISDIR")
      throw new TransferError(`cannot read ${file} (${code})`);
    throw error;
  }
}

/**
 * Writes every blob of the file into the store, streaming: the next line is read only when the
 * store has taken the chunk before.
 */
async function writeBlobs(file: string, store: BlobStore, sizes: Map<string, number>): Promise<void> {
  let sink = null as BlobSink | null;
  try {
    for await (const line of linesOf(file)) {
      if (!line.startsWith(BLOB_PREFIX)) continue;
      const { b: key, d } = JSON.parse(line) as { b: string; d: string };
      if (sink?.key !== key) {
        await sink?.close();
        sink = openBlobSink(store, key, sizes.get(key)!);
      }
      await sink.write(Buffer.from(d, "base64"));
    }
    await sink?.close();
  } catch (error) {
    if (error instanceof TransferError || !sink) throw error;
    throw new TransferError(`cannot store blob ${sink.key} in the ${store.kind} store: ${oneLine(error)}`, {
      cause: error,
    });
  }
}

/** The expected blobs the store lacks or holds with another size. */
async function missingBlobs(store: BlobStore, expected: ExpectedBlob[]): Promise<string[]> {
  const missing: string[] = [];
  for (const blob of expected) {
    const found = await store.stat(blob.key);
    if (found?.size !== blob.size) missing.push(blob.key);
  }
  return missing;
}

/** The insert pass: rows in file order, a batch per INSERT. */
async function insertRows(tx: Db, file: string, tables: CatalogTable[]): Promise<void> {
  const byName = new Map(tables.map((t) => [t.name, t]));
  let table = null as CatalogTable | null;
  let batch: Record<string, unknown>[] = [];
  const flush = async () => {
    if (table && batch.length > 0) await insertBatch(tx, table, batch);
    batch = [];
  };
  let first = true;
  for await (const line of linesOf(file)) {
    if (first) {
      first = false;
      continue;
    }
    if (!line.startsWith(ROW_PREFIX)) break; // the rows are over: blobs or the trailer follow
    const { t, r } = JSON.parse(line) as { t: string; r: Record<string, unknown> };
    if (table?.name !== t) {
      await flush();
      table = byName.get(t)!;
    }
    const row: Record<string, unknown> = {};
    for (const c of table.columns) row[c.key] = r[c.name];
    batch.push(row);
    if (batch.length >= batchRows(table)) await flush();
  }
  await flush();
}

function batchRows(table: CatalogTable): number {
  return Math.min(MAX_BATCH_ROWS, Math.floor(MAX_PARAMETERS / table.columns.length));
}

async function insertBatch(tx: Db, table: CatalogTable, rows: Record<string, unknown>[]): Promise<void> {
  try {
    await insertRowBatch(tx, table, rows);
  } catch (error) {
    // The cause is kept: PostgreSQL's engine retries the transaction on a serialization failure.
    throw new TransferError(`cannot insert into ${table.name}: ${oneLine(error)}`, { cause: error });
  }
}

function oneLine(error: unknown): string {
  return ((error as Error).message ?? String(error)).split("\n")[0]!;
}
