// Local blobs as a backup sees them: the finished objects under <dataDir>/blobs (never the temporary
// files or the parts of uploads in progress, which clients send again).
//
// Deleting an asset removes its bytes at once, so a blob the snapshot needs could vanish before it is
// copied. The backup therefore pins blobs with hard links (no bytes copied) into
// <dataDir>/blobs/.backup-<pid>/ (dot folders are invisible to the store and its cleanup): once
// before the snapshot and once after it. A blob the snapshot needs either existed at the first pass
// (pinned, whatever happens later) or was written between the passes (pinned by the second unless
// deleted in the moment between the snapshot and it, in which case backup.ts snapshots again). Where
// hard links are not possible the originals are read directly.
import { createReadStream } from "node:fs";
import { link, mkdir, readdir, rm, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { isValidBlobKey } from "../../blobs/store.ts";

const PIN_PREFIX = ".backup-";

/** Every object's key under `root` (keys look like `ws_…/ast_…`), sorted. */
export async function listBlobKeys(root: string): Promise<string[]> {
  const keys: string[] = [];
  const walk = async (dir: string, prefix: string) => {
    for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      if (entry.name.startsWith(".")) continue; // .tmp, .multipart, pins
      const key = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory()) await walk(join(dir, entry.name), key);
      else if (entry.isFile() && isValidBlobKey(key)) keys.push(key);
    }
  };
  await walk(root, "");
  return keys.sort();
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Hard links that keep blobs readable for one backup, whatever is deleted meanwhile. */
export class BlobPins {
  private readonly dir: string;
  private readonly pinned = new Set<string>();
  private linking = true;

  constructor(private readonly root: string) {
    this.dir = join(root, `${PIN_PREFIX}${process.pid}`);
  }

  /** Removes pins a killed backup left behind (their process is gone). */
  async sweepStale(): Promise<void> {
    for (const name of await readdir(this.root).catch(() => [] as string[])) {
      const pid = name.startsWith(PIN_PREFIX) ? Number(name.slice(PIN_PREFIX.length)) : NaN;
      if (Number.isInteger(pid) && pid !== process.pid && !processAlive(pid))
        await rm(join(this.root, name), { recursive: true, force: true });
    }
  }

  /**
   * Pins every blob present now that is not pinned yet; returns the keys pinned (and, where hard links
   * are impossible, the keys listed). A blob deleted between the listing and its link is left out, so
   * the snapshot's check sees it missing and takes the snapshot again.
   */
  async pinAll(): Promise<string[]> {
    const keys = await listBlobKeys(this.root);
    const gone = new Set<string>();
    for (const key of keys) {
      if (!this.linking || this.pinned.has(key)) continue;
      const target = join(this.dir, key);
      try {
        await mkdir(dirname(target), { recursive: true });
        await link(join(this.root, key), target);
        this.pinned.add(key);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "ENOENT")
          gone.add(key); // deleted since the listing
        else if (code === "EEXIST") this.pinned.add(key);
        else this.linking = false; // no hard links here (EXDEV, EPERM, ENOTSUP…): read originals
      }
    }
    return [...new Set([...keys.filter((k) => !gone.has(k)), ...this.pinned])].sort();
  }

  /** A blob's size and bytes (pinned copy first), or null when it is gone. */
  async open(key: string): Promise<{ size: number; chunks: AsyncIterable<Uint8Array> } | null> {
    const path = this.pinned.has(key) ? join(this.dir, key) : join(this.root, key);
    const info = await stat(path).catch(() => null);
    if (!info?.isFile()) return null;
    // Objects are written once and renamed into place: the size read now is the size read below.
    return { size: info.size, chunks: createReadStream(path, { highWaterMark: 1024 * 1024 }) };
  }

  async release(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}
