// A minimal POSIX ustar writer and reader for backup files: regular files only, streamed, so a backup
// of many gigabytes never sits in memory, and any `tar` can list or unpack it by hand.
import type { FileHandle } from "node:fs/promises";

const BLOCK = 512;
const ZEROS = new Uint8Array(BLOCK * 2);
/** The largest size the 11 octal digits of a header hold; larger ones use base-256 (GNU). */
const OCTAL_SIZE_LIMIT = 8 ** 11 - 1;

/** A damaged, truncated or foreign archive. */
export class ArchiveError extends Error {}

function putString(header: Uint8Array, offset: number, length: number, value: string): void {
  const bytes = new TextEncoder().encode(value);
  if (bytes.length > length) throw new ArchiveError(`"${value}" does not fit a tar header field`);
  header.set(bytes, offset);
}

function putOctal(header: Uint8Array, offset: number, length: number, value: number): void {
  putString(header, offset, length, value.toString(8).padStart(length - 1, "0") + "\0");
}

/** Splits a path into ustar's name (≤ 100 bytes) and prefix (≤ 155 bytes) at a slash. */
function splitName(path: string): { name: string; prefix: string } {
  if (path.length <= 100) return { name: path, prefix: "" };
  for (let cut = path.indexOf("/"); cut !== -1; cut = path.indexOf("/", cut + 1)) {
    if (cut <= 155 && path.length - cut - 1 <= 100)
      return { prefix: path.slice(0, cut), name: path.slice(cut + 1) };
  }
  throw new ArchiveError(`path too long for a tar header: ${path}`);
}

/** The 512-byte header of a regular file (mode 0600, owned by nobody in particular). */
export function fileHeader(path: string, size: number, mtimeMs: number): Uint8Array {
  const header = new Uint8Array(BLOCK);
  const { name, prefix } = splitName(path);
  putString(header, 0, 100, name);
  putOctal(header, 100, 8, 0o600);
  putOctal(header, 108, 8, 0);
  putOctal(header, 116, 8, 0);
  if (size <= OCTAL_SIZE_LIMIT) putOctal(header, 124, 12, size);
  else {
    header[124] = 0x80;
    for (let i = 135, rest = BigInt(size); i > 124; i--, rest >>= 8n) header[i] = Number(rest & 0xffn);
  }
  putOctal(header, 136, 12, Math.floor(mtimeMs / 1000));
  header.fill(0x20, 148, 156); // the checksum is computed with its own field as spaces
  header[156] = 0x30; // "0": regular file
  putString(header, 257, 6, "ustar\0");
  putString(header, 263, 2, "00");
  putString(header, 345, 155, prefix);
  const sum = header.reduce((a, b) => a + b, 0);
  putString(header, 148, 8, sum.toString(8).padStart(6, "0") + "\0 ");
  return header;
}

/** Writes entries one after another to an open file; `finish` writes the end-of-archive blocks. */
export class TarWriter {
  private position = 0;
  constructor(private readonly file: FileHandle) {}

  private async write(bytes: Uint8Array): Promise<void> {
    for (let done = 0; done < bytes.length; ) {
      const { bytesWritten } = await this.file.write(bytes, done, bytes.length - done, this.position);
      done += bytesWritten;
      this.position += bytesWritten;
    }
  }

  /**
   * One file of exactly `size` bytes from `chunks` (each also handed to `onChunk`); a source that
   * yields another number of bytes (a file that changed while read) is an error.
   */
  async add(
    path: string,
    size: number,
    chunks: AsyncIterable<Uint8Array> | Uint8Array[],
    onChunk?: (chunk: Uint8Array) => void,
  ): Promise<void> {
    await this.write(fileHeader(path, size, Date.now()));
    let written = 0;
    for await (const chunk of chunks) {
      written += chunk.length;
      if (written > size) throw new Error(`${path} grew while it was copied`);
      onChunk?.(chunk);
      await this.write(chunk);
    }
    if (written !== size) throw new Error(`${path} has ${written} bytes, ${size} were expected`);
    const padding = (BLOCK - (size % BLOCK)) % BLOCK;
    if (padding > 0) await this.write(ZEROS.subarray(0, padding));
  }

  async finish(): Promise<void> {
    await this.write(ZEROS);
  }
}

/** One file of an archive: where its bytes are. */
export interface TarEntry {
  path: string;
  size: number;
  offset: number;
}

function readString(header: Uint8Array, offset: number, length: number): string {
  const field = header.subarray(offset, offset + length);
  const end = field.indexOf(0);
  return new TextDecoder().decode(end === -1 ? field : field.subarray(0, end));
}

function readNumber(header: Uint8Array, offset: number, length: number): number {
  if (header[offset]! & 0x80) {
    let value = 0n;
    for (let i = offset + 1; i < offset + length; i++) value = (value << 8n) | BigInt(header[i]!);
    return Number(value);
  }
  const text = readString(header, offset, length).trim();
  if (!/^[0-7]*$/.test(text)) throw new ArchiveError("not a tar archive (bad number in a header)");
  return text === "" ? 0 : Number.parseInt(text, 8);
}

/**
 * Every regular file of the archive, in order, read from its headers alone (each header's checksum
 * checked). A truncated archive, or one without its end blocks, is refused.
 */
export async function listEntries(file: FileHandle): Promise<TarEntry[]> {
  const total = (await file.stat()).size;
  const entries: TarEntry[] = [];
  const header = new Uint8Array(BLOCK);
  for (let position = 0; ; ) {
    if (position + BLOCK > total) throw new ArchiveError("the archive is truncated (no end blocks)");
    await file.read(header, 0, BLOCK, position);
    if (header.every((b) => b === 0)) return entries;
    const stored = readNumber(header, 148, 8);
    const copy = header.slice();
    copy.fill(0x20, 148, 156);
    if (copy.reduce((a, b) => a + b, 0) !== stored) throw new ArchiveError("a tar header is damaged");
    const size = readNumber(header, 124, 12);
    const prefix = readString(header, 345, 155);
    const name = readString(header, 0, 100);
    const type = String.fromCharCode(header[156]!);
    const offset = position + BLOCK;
    if (offset + size > total) throw new ArchiveError("the archive is truncated");
    if (type === "0" || type === "\0")
      entries.push({ path: prefix ? `${prefix}/${name}` : name, size, offset });
    position = offset + Math.ceil(size / BLOCK) * BLOCK;
  }
}

/** The bytes of one entry, a MiB at a time (fresh buffers: a consumer may keep them). */
export async function* entryChunks(file: FileHandle, entry: TarEntry): AsyncGenerator<Uint8Array> {
  for (let done = 0; done < entry.size; ) {
    const buffer = Buffer.allocUnsafe(Math.min(1024 * 1024, entry.size - done));
    const { bytesRead } = await file.read(buffer, 0, buffer.length, entry.offset + done);
    if (bytesRead === 0) throw new ArchiveError("the archive ended early");
    done += bytesRead;
    yield buffer.subarray(0, bytesRead);
  }
}
