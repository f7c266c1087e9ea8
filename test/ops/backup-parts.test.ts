// The backup's parts on their own: blob pins survive a deletion, stale pins are swept, the tar writer's
// output is what `tar` reads (names past 100 bytes included). Milliseconds.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BlobPins, listBlobKeys } from "../../src/modules/backup/blobs.ts";
import { entryChunks, listEntries, TarWriter } from "../../src/modules/backup/tar.ts";

const work = mkdtempSync(join(tmpdir(), "herald-backup-parts-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("blob pins", () => {
  test("a pinned blob stays readable after the store deletes it; dot folders are not blobs", async () => {
    const root = join(work, "blobs");
    mkdirSync(join(root, "ws_a"), { recursive: true });
    mkdirSync(join(root, ".tmp"), { recursive: true });
    writeFileSync(join(root, "ws_a", "ast_1"), "first");
    writeFileSync(join(root, ".tmp", ".tmp-x"), "half-written");
    const stale = join(root, ".backup-999999999"); // no such process
    mkdirSync(stale);
    expect(await listBlobKeys(root)).toEqual(["ws_a/ast_1"]);

    const pins = new BlobPins(root);
    await pins.sweepStale();
    expect(existsSync(stale)).toBe(false);
    expect(await pins.pinAll()).toEqual(["ws_a/ast_1"]);
    rmSync(join(root, "ws_a", "ast_1")); // the asset was deleted meanwhile
    writeFileSync(join(root, "ws_a", "ast_2"), "second");
    expect(await pins.pinAll()).toEqual(["ws_a/ast_1", "ws_a/ast_2"]);
    const blob = await pins.open("ws_a/ast_1");
    expect(blob?.size).toBe(5);
    expect(await new Response(blob!.chunks as never).text()).toBe("first");
    await pins.release();
    expect(await listBlobKeys(root)).toEqual(["ws_a/ast_2"]);
    expect(await pins.open("ws_a/ast_1")).toBeNull();
  });
});

describe("tar", () => {
  test("entries written are listed and read back, and `tar` agrees", async () => {
    const path = join(work, "t.tar");
    const file = await open(path, "wx");
    const writer = new TarWriter(file);
    const long = `blobs/ws_${"a".repeat(60)}/ast_${"b".repeat(60)}`;
    const files: [string, Uint8Array][] = [
      ["manifest.json", new TextEncoder().encode("{}\n")],
      [long, new Uint8Array(1500).fill(7)],
      ["empty", new Uint8Array(0)],
    ];
    for (const [name, bytes] of files) await writer.add(name, bytes.length, [bytes]);
    await expect(writer.add("short", 10, [new Uint8Array(3)])).rejects.toThrow(/3 bytes, 10 were expected/);
    await file.close();

    const clean = join(work, "clean.tar");
    const out = await open(clean, "wx");
    const again = new TarWriter(out);
    for (const [name, bytes] of files) await again.add(name, bytes.length, [bytes]);
    await again.finish();
    await out.close();
    const read = await open(clean, "r");
    const entries = await listEntries(read);
    expect(entries.map((e) => [e.path, e.size])).toEqual(files.map(([n, b]) => [n, b.length]));
    const chunks: Uint8Array[] = [];
    for await (const chunk of entryChunks(read, entries[1]!)) chunks.push(chunk);
    expect(Buffer.concat(chunks).equals(Buffer.from(files[1]![1]))).toBe(true);
    await read.close();
    const listed = Bun.spawnSync(["tar", "-tf", clean]).stdout.toString().trim().split("\n");
    expect(listed).toEqual(files.map(([n]) => n));
  });
});
