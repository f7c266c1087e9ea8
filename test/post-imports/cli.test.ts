// `herald posts import FILE`: the table of rows, the exit codes, the confirmation, and a re-run that
// replays the first import instead of importing twice.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import {
  cells,
  failed,
  herald,
  heraldOnTerminal,
  removeTempDirs,
  succeeded,
  tempDir,
} from "../cli/helpers.ts";
import { startPostsWorld, type PostsWorld } from "../posts/helpers.ts";

let w: PostsWorld;
let env: Record<string, string>;
let dir: string;
beforeAll(async () => {
  w = await startPostsWorld();
  dir = tempDir();
  env = { HERALD_API_URL: w.s.url, HERALD_API_KEY: w.s.owner.apiKey, HERALD_CONFIG_DIR: `${dir}/config` };
});
afterAll(async () => {
  await w.stop();
  removeTempDirs();
});

const LATER = "2026-03-05T09:00:00+01:00";
let files = 0;
function csvFile(text: string): string {
  const path = `${dir}/import-${++files}.csv`;
  writeFileSync(path, text);
  return path;
}
const postsOfGroup = async (group: string) =>
  (await w.s.request("GET", `/v1/workspaces/${w.ws}/posts?group=${group}`)).body.data;

describe("herald posts import", () => {
  test("--dry-run prints a row per data row and exits 1 when one is not valid", async () => {
    const file = csvFile(
      `group,when,destination_id,body\ncli-a,${LATER},${w.destinationId},"Hello,\nworld"\ncli-b,tomorrow,dest_nope,x\n`,
    );
    const r = await herald(["posts", "import", file, "--dry-run"], env);
    expect(r.code).toBe(1);
    const table = cells(r.stdout);
    expect(table[0]).toEqual(["ROW", "VALID", "ERRORS", "POST IDS"]);
    expect(table[1]).toEqual(["2", "yes", "-", "-"]);
    expect(table[2]![0]).toBe("3");
    expect(table[2]![1]).toBe("no");
    expect(table[2]![2]).toContain("when: ");
    expect(table[2]![2]).toContain("destination_id: no destination dest_nope in this workspace");
    expect(r.stdout).toContain("1 of 2 row(s) not valid; nothing was stored");
    expect(await postsOfGroup("cli-a")).toEqual([]);
  });

  test("--dry-run of a valid file exits 0 and stores nothing", async () => {
    const file = csvFile(`group,when,destination_id,body\ncli-dry,${LATER},${w.destinationId},ok\n`);
    const out = succeeded(await herald(["posts", "import", file, "--dry-run"], env));
    expect(out).toContain("dry run: all 1 row(s) valid; nothing was stored");
    expect(await postsOfGroup("cli-dry")).toEqual([]);
  });

  test("an invalid file is not stored even with --yes (exit 1)", async () => {
    const file = csvFile(`group,when,destination_id,body\ncli-bad,${LATER},dest_nope,x\n`);
    const r = await herald(["posts", "import", file, "--yes"], env);
    expect(r.code).toBe(1);
    expect(cells(r.stdout)[1]).toEqual([
      "2",
      "no",
      "destination_id: no destination dest_nope in this workspace",
      "-",
    ]);
    expect(r.stdout).toContain("1 of 1 row(s) not valid; nothing was stored");
    expect(await postsOfGroup("cli-bad")).toEqual([]);
  });

  test("without a terminal and without --yes it refuses before storing (exit 2)", async () => {
    const file = csvFile(`group,when,destination_id,body\ncli-ask,${LATER},${w.destinationId},x\n`);
    const line = failed(await herald(["posts", "import", file], env), 2);
    expect(line).toContain("needs confirmation; pass --yes");
    expect(await postsOfGroup("cli-ask")).toEqual([]);
  });

  test("at a terminal it asks, and stores once answered y", async () => {
    const file = csvFile(`group,when,destination_id,body\ncli-tty,${LATER},${w.destinationId},x\n`);
    const r = await heraldOnTerminal(["posts", "import", file], env, { prompt: "[y/N]", answer: "y\n" });
    expect(r.screen).toContain("Import 1 post(s) from");
    expect(r.screen).toMatch(/ROW +VALID +ERRORS +POST IDS/);
    expect(r.code).toBe(0);
    expect(await postsOfGroup("cli-tty")).toHaveLength(1);
  });

  test("--yes stores every row and prints the post ids; the same file again imports nothing new", async () => {
    const file = csvFile(
      `group,when,channel,destination_id,body\ncli-yes,${LATER},,${w.destinationId},one\ncli-yes-2,draft,mastodon,,two\n`,
    );
    const out = succeeded(await herald(["posts", "import", file, "--yes"], env));
    const table = cells(out);
    const [one] = await postsOfGroup("cli-yes");
    const [two] = await postsOfGroup("cli-yes-2");
    expect(table[1]).toEqual(["2", "yes", "-", one.id]);
    expect(table[2]).toEqual(["3", "yes", "-", two.id]);
    expect(out).toMatch(/imported 2 post\(s\) \(imp_/);
    const again = succeeded(await herald(["posts", "import", file, "--yes"], env));
    expect(again).toContain("this file was already imported");
    expect(cells(again)[1]).toEqual(["2", "yes", "-", one.id]);
    expect(await postsOfGroup("cli-yes")).toHaveLength(1);
    expect(await postsOfGroup("cli-yes-2")).toHaveLength(1);
  });

  test("a missing file is a usage error", async () => {
    const line = failed(await herald(["posts", "import", `${dir}/missing.csv`, "--dry-run"], env), 2);
    expect(line).toContain("is not a readable file");
  });
});
