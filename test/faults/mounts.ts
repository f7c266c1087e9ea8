// Small file systems for the storage faults (root only): a size-limited tmpfs that can be filled and
// grown, and an ext4 image on a loop device that the kernel can be told to turn read-only under a
// running process (errors=remount-ro after an injected file-system error, as after a failing disk).
import { execFileSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";

function sh(command: string, args: string[]): string {
  return execFileSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/** Why mounts cannot be made here (printed when the scenario is skipped), or null. */
export function mountsUnavailable(): string | null {
  if (process.platform !== "linux") return "mounting needs Linux";
  if (process.getuid?.() !== 0) return "mounting a size-limited tmpfs or a loop device needs root";
  const probe = mkdtempSync(join(tmpdir(), "herald-mount-probe-"));
  try {
    sh("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", probe]);
    sh("umount", [probe]);
    return null;
  } catch (error) {
    return `mount -t tmpfs failed (${String((error as Error).message).split("\n")[0]})`;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

/** A tmpfs of `megabytes`: `fill` takes every free byte, `free` gives it back. */
export function smallTmpfs(megabytes: number) {
  const dir = mkdtempSync(join(tmpdir(), "herald-full-"));
  sh("mount", ["-t", "tmpfs", "-o", `size=${megabytes}m,mode=0700`, "tmpfs", dir]);
  const filler = join(dir, "filler");
  return {
    dir,
    /** Writes a filler file until the disk refuses (ENOSPC). */
    fill() {
      const fd = openSync(filler, "w");
      const chunk = Buffer.alloc(64 * 1024);
      try {
        for (;;) writeSync(fd, chunk);
      } catch (error) {
        if ((error as { code?: string }).code !== "ENOSPC") throw error;
      } finally {
        closeSync(fd);
      }
      // Whatever a 64 KiB chunk left over, byte by byte (SQLite could otherwise squeeze a page in).
      const fd2 = openSync(filler, "a");
      try {
        for (;;) writeSync(fd2, Buffer.alloc(512));
      } catch {
        // full
      } finally {
        closeSync(fd2);
      }
    },
    free() {
      rmSync(filler, { force: true });
    },
    unmount() {
      sh("umount", ["-l", dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Why a loop device cannot be used here, or null. */
export function loopUnavailable(): string | null {
  try {
    sh("losetup", ["-f"]);
    sh("mkfs.ext4", ["-V"]);
    return null;
  } catch (error) {
    return `no free loop device or no mkfs.ext4 (${String((error as Error).message).split("\n")[0]})`;
  }
}

/** An ext4 image of `megabytes` mounted with errors=remount-ro. */
export function ext4Image(megabytes: number) {
  const dir = mkdtempSync(join(tmpdir(), "herald-ro-"));
  const image = `${dir}.img`;
  writeFileSync(image, "");
  sh("truncate", ["-s", `${megabytes}M`, image]);
  sh("mkfs.ext4", ["-q", "-F", image]);
  const mount = (mode: "rw" | "ro") => sh("mount", ["-o", `loop,${mode},errors=remount-ro`, image, dir]);
  mount("rw");
  const device = () => sh("findmnt", ["-no", "SOURCE", dir]).trim();
  return {
    dir,
    /** Writes every dirty page of the file system to the image (sync -f). */
    flush() {
      sh("sync", ["-f", dir]);
    },
    /**
     * Injects a file-system error: the kernel turns the mount read-only at once, files open for
     * writing included (what a failing disk does to a running service).
     */
    failNow() {
      writeFileSync(`/sys/fs/ext4/${basename(device())}/trigger_fs_error`, "herald fault injection");
    },
    /** Unmounts, repairs (e2fsck) and mounts again, read-only or writable; e2fsck's output. */
    remount(mode: "rw" | "ro"): string {
      sh("umount", [dir]);
      let report: string;
      try {
        report = sh("e2fsck", ["-fy", image]);
      } catch (error) {
        // Exit 1: errors were corrected, which is what it is for here.
        report = String((error as { stdout?: string }).stdout ?? "");
      }
      mount(mode);
      return report;
    },
    options: () => sh("findmnt", ["-no", "OPTIONS", dir]).trim(),
    unmount() {
      try {
        sh("umount", ["-l", dir]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
        rmSync(image, { force: true });
      }
    },
  };
}
