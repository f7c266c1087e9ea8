import { mkdtemp, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCrc64Nvme, crc64nvmeToBase64, type Crc64Nvme } from "../../lib/crc64nvme.ts";
import { partSizeFor } from "../../modules/assets/parts.ts";

// A streaming reader of the dashboard's multipart forms: text fields are kept (small), each file streams
// to a temporary file with the CRC64NVME of every upload part and of the whole computed on the way, so
// an upload never sits in memory and can go on to the API's multipart flow without a second read.

/** A file of the form, on disk until `cleanup`. */
export interface ReceivedFile {
  field: string;
  fileName: string;
  contentType: string;
  path: string;
  byteSize: number;
  /** CRC64NVME (base64) of each part of the API's part rule for this size. */
  partChecksums: string[];
  checksum: string;
}

/** A form read from a request. */
export interface ReceivedForm {
  fields: URLSearchParams;
  files: ReceivedFile[];
  /** Removes the temporary files. */
  cleanup(): Promise<void>;
}

/** The body (or one file of it) is over the limit. */
export class BodyTooLarge extends Error {}
/** A file came before the form proved it is from this browser. */
export class FormRefused extends Error {}

/** All text fields together, at most (the API takes 1 MiB of JSON). */
const MAX_FIELD_BYTES = 1024 * 1024;

/** Limits and the CSRF gate of one read. */
export interface ReadLimits {
  /** Bytes of files the form may carry, in all. */
  maxFileBytes: number;
  /** Asked before the first file's bytes are stored, with the fields so far (the CSRF token is first). */
  allowFiles(fields: URLSearchParams): boolean;
}

/** Streams bytes of one file to disk with its checksums. */
class FileSink {
  private written = 0;
  private partLeft: number;
  private readonly partSize: number;
  private readonly partChecksums: string[] = [];
  private constructor(
    private readonly handle: Awaited<ReturnType<typeof open>>,
    private readonly part: Crc64Nvme,
    private readonly whole: Crc64Nvme,
    maxBytes: number,
  ) {
    // Parts are cut as the API will expect them for a file of at most the limit.
    this.partSize = partSizeFor(maxBytes);
    this.partLeft = this.partSize;
  }
  static async open(path: string, maxBytes: number): Promise<FileSink> {
    return new FileSink(await open(path, "w"), await createCrc64Nvme(), await createCrc64Nvme(), maxBytes);
  }
  get size(): number {
    return this.written;
  }
  async write(chunk: Uint8Array): Promise<void> {
    if (chunk.length === 0) return;
    await this.handle.write(chunk);
    this.whole.update(chunk);
    let offset = 0;
    while (offset < chunk.length) {
      const take = Math.min(this.partLeft, chunk.length - offset);
      this.part.update(chunk.subarray(offset, offset + take));
      offset += take;
      this.partLeft -= take;
      if (this.partLeft === 0) this.endPart();
    }
    this.written += chunk.length;
  }
  private endPart(): void {
    this.partChecksums.push(crc64nvmeToBase64(this.part.digest()));
    this.part.reset();
    this.partLeft = this.partSize;
  }
  async close(): Promise<{ partChecksums: string[]; checksum: string; partSize: number }> {
    if (this.partLeft !== this.partSize) this.endPart();
    await this.handle.close();
    return {
      partChecksums: this.partChecksums,
      checksum: crc64nvmeToBase64(this.whole.digest()),
      partSize: this.partSize,
    };
  }
}

function boundaryOf(contentType: string): string | null {
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(contentType);
  return match ? (match[1] ?? match[2]!) : null;
}

function dispositionOf(headers: string): { name: string; fileName: string | null; type: string } {
  const disposition = /^content-disposition:(.*)$/im.exec(headers)?.[1] ?? "";
  const name = /\bname="([^"]*)"/i.exec(disposition)?.[1] ?? "";
  const fileName = /\bfilename="([^"]*)"/i.exec(disposition)?.[1] ?? null;
  const type = /^content-type:\s*(.*)$/im.exec(headers)?.[1]?.trim() ?? "application/octet-stream";
  return { name, fileName, type };
}

/**
 * Reads a `multipart/form-data` body as it streams (or a urlencoded one, through `urlencoded`). Throws
 * BodyTooLarge past the limits and FormRefused when a file comes before `allowFiles` accepts the form
 * or a name or value holds a NUL character.
 */
export async function readMultipartForm(request: Request, limits: ReadLimits): Promise<ReceivedForm | null> {
  const boundary = boundaryOf(request.headers.get("content-type") ?? "");
  if (!boundary || !request.body) return null;
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > limits.maxFileBytes + MAX_FIELD_BYTES) throw new BodyTooLarge();
  const dir = await mkdtemp(join(tmpdir(), "herald-dashboard-upload-"));
  const form: ReceivedForm = {
    fields: new URLSearchParams(),
    files: [],
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
  const parts = new PartCollector(form, dir, limits);
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  const reader = request.body.getReader();
  // The leading CRLF lets the first boundary be found like every later one.
  let buffer: Buffer = Buffer.from("\r\n");
  let state: ParseState = "preamble";

  try {
    while (state !== "done") {
      const { done, value } = await reader.read();
      if (value) buffer = buffer.length ? Buffer.concat([buffer, value]) : Buffer.from(value);
      ({ state, buffer } = await advance(state, buffer, delimiter, parts));
      if (done) break;
    }
    await reader.cancel().catch(() => {});
    // A body cut short leaves its last file unfinished: it is closed and not kept.
    await parts.closeUnfinished();
    return form;
  } catch (error) {
    await reader.cancel().catch(() => {});
    await parts.closeUnfinished().catch(() => {});
    await form.cleanup();
    throw error;
  }
}

/** Where the parser is: before the first boundary, after a boundary, in a part's headers or body. */
type ParseState = "preamble" | "after" | "headers" | "body" | "done";

/**
 * Parses what `buffer` holds as far as it goes, handing the parts' bytes to `parts`; returns the state
 * and what is kept for the next bytes (a possible delimiter start, incomplete headers).
 */
async function advance(
  state: ParseState,
  buffer: Buffer,
  delimiter: Buffer,
  parts: PartCollector,
): Promise<{ state: ParseState; buffer: Buffer }> {
  for (;;) {
    if (state === "preamble" || state === "body") {
      const at = buffer.indexOf(delimiter);
      if (at < 0) {
        // Keep what could be the start of a delimiter; the rest belongs to the part.
        const safe = Math.max(0, buffer.length - delimiter.length);
        if (state === "body") await parts.emit(buffer.subarray(0, safe));
        return { state, buffer: buffer.subarray(safe) };
      }
      if (state === "body") {
        await parts.emit(buffer.subarray(0, at));
        await parts.endPart();
      }
      buffer = buffer.subarray(at + delimiter.length);
      state = "after";
    } else if (state === "after") {
      if (buffer.length < 2) return { state, buffer };
      if (buffer.subarray(0, 2).toString() === "--") state = "done";
      else state = "headers";
      buffer = buffer.subarray(2);
      if (state === "done") return { state, buffer };
    } else if (state === "headers") {
      const end = buffer.indexOf("\r\n\r\n");
      if (end < 0) {
        if (buffer.length > 16 * 1024) throw new BodyTooLarge();
        return { state, buffer };
      }
      await parts.startPart(buffer.subarray(0, end).toString("utf8"));
      buffer = buffer.subarray(end + 4);
      state = "body";
    } else return { state, buffer };
  }
}

/** The form's parts as they arrive: a field's bytes kept (within MAX_FIELD_BYTES), a file's written to disk. */
class PartCollector {
  private field: { name: string; chunks: Buffer[] } | null = null;
  private file: {
    sink: FileSink;
    info: Omit<ReceivedFile, "byteSize" | "partChecksums" | "checksum">;
  } | null = null;
  private fieldBytes = 0;
  private fileBytes = 0;

  constructor(
    private readonly form: ReceivedForm,
    private readonly dir: string,
    private readonly limits: ReadLimits,
  ) {}

  /** Bytes of the current part's body. */
  async emit(bytes: Buffer): Promise<void> {
    if (this.field) {
      this.fieldBytes += bytes.length;
      if (this.fieldBytes > MAX_FIELD_BYTES) throw new BodyTooLarge();
      this.field.chunks.push(bytes);
    } else if (this.file) {
      this.fileBytes += bytes.length;
      if (this.fileBytes > this.limits.maxFileBytes) throw new BodyTooLarge();
      await this.file.sink.write(bytes);
    }
  }

  /** The current part is complete: its field is added, its file closed and listed. */
  async endPart(): Promise<void> {
    if (this.field) {
      const value = Buffer.concat(this.field.chunks).toString("utf8");
      // As readForm: no browser sends a NUL from a form, and PostgreSQL text cannot hold one.
      if (this.field.name.includes("\0") || value.includes("\0")) throw new FormRefused();
      this.form.fields.append(this.field.name, value);
    }
    if (this.file) {
      const done = await this.file.sink.close();
      // An empty file input still sends a part: no file was chosen.
      if (this.file.sink.size > 0)
        this.form.files.push({ ...this.file.info, byteSize: this.file.sink.size, ...done });
    }
    this.field = null;
    this.file = null;
  }

  /** A part begins with these headers: a field, a file (once the form allows files) or nothing chosen. */
  async startPart(headers: string): Promise<void> {
    const { name, fileName, type } = dispositionOf(headers);
    if (fileName === null) {
      this.field = { name, chunks: [] };
      return;
    }
    if (fileName === "") return; // no file chosen: its (empty) bytes are skipped
    if (fileName.includes("\0") || name.includes("\0")) throw new FormRefused();
    if (!this.limits.allowFiles(this.form.fields)) throw new FormRefused();
    const path = join(this.dir, `file-${this.form.files.length + 1}`);
    this.file = {
      sink: await FileSink.open(path, this.limits.maxFileBytes),
      info: { field: name, fileName: fileName.slice(0, 500), contentType: type.slice(0, 200), path },
    };
  }

  /** Closes a file whose part never ended (a body cut short); it is not kept. */
  async closeUnfinished(): Promise<void> {
    if (this.file) await this.file.sink.close();
  }
}

/** Streams a raw request body (the script's fallback upload) to a temporary file with its checksums. */
export async function readRawFile(
  request: Request,
  file: { fileName: string; contentType: string; maxFileBytes: number },
): Promise<ReceivedForm> {
  if (Number(request.headers.get("content-length") ?? "0") > file.maxFileBytes) throw new BodyTooLarge();
  const dir = await mkdtemp(join(tmpdir(), "herald-dashboard-upload-"));
  const cleanup = () => rm(dir, { recursive: true, force: true });
  const path = join(dir, "file-1");
  const sink = await FileSink.open(path, file.maxFileBytes);
  const reader = request.body?.getReader();
  try {
    for (;;) {
      const next = reader ? await reader.read() : { done: true as const, value: undefined };
      if (next.value) {
        if (sink.size + next.value.length > file.maxFileBytes) throw new BodyTooLarge();
        await sink.write(next.value);
      }
      if (next.done) break;
    }
    const done = await sink.close();
    const files =
      sink.size > 0
        ? [
            {
              field: "file",
              fileName: file.fileName,
              contentType: file.contentType,
              path,
              byteSize: sink.size,
              ...done,
            },
          ]
        : [];
    return { fields: new URLSearchParams(), files, cleanup };
  } catch (error) {
    await reader?.cancel().catch(() => {});
    await sink.close().catch(() => {});
    await cleanup();
    throw error;
  }
}
