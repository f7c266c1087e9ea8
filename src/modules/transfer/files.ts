// Line-by-line file access with flat memory: a buffered appender and a line reader.
import { createReadStream } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { createInterface } from "node:readline";

/** Text gathered before one write call. */
const FLUSH_BYTES = 1024 * 1024;

/** Appends lines to a new file (mode 0600: it holds post content and sealed credentials). */
export class LineWriter {
  private pending: string[] = [];
  private size = 0;

  private constructor(private readonly file: FileHandle) {}

  /** Creates `path`; fails when it exists. */
  static async create(path: string): Promise<LineWriter> {
    return new LineWriter(await open(path, "wx", 0o600));
  }

  async write(line: string): Promise<void> {
    this.pending.push(line, "\n");
    this.size += line.length + 1;
    if (this.size >= FLUSH_BYTES) await this.flush();
  }

  private async flush(): Promise<void> {
    const text = this.pending.join("");
    this.pending = [];
    this.size = 0;
    await this.file.write(text);
  }

  /** Writes what is buffered, makes it durable and closes the file. */
  async close(): Promise<void> {
    await this.flush();
    await this.file.sync();
    await this.file.close();
  }

  /** Closes without caring about the content (after a failure). */
  async abandon(): Promise<void> {
    await this.file.close().catch(() => {});
  }
}

/** The lines of a file, without their line ends. */
export async function* readLines(path: string): AsyncGenerator<string> {
  const input = createReadStream(path, { encoding: "utf8", highWaterMark: FLUSH_BYTES });
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  try {
    yield* lines;
  } finally {
    lines.close();
    input.destroy();
  }
}
