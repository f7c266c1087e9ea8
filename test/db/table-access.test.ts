// Tables are read and written only through repositories: a module's `repo.ts` (and the `repo-<topic>.ts`
// files it is split into) and src/db itself. Everything else calls their named functions.
import { expect, test } from "bun:test";
import { Glob } from "bun";
import { join } from "node:path";

const SRC = join(import.meta.dir, "..", "..", "src");
const REPOSITORY = /^(db\/|modules\/[^/]+\/repo(-[a-z0-9-]+)?\.ts$)/;

test("only repositories and src/db reach the tables", async () => {
  const outside: string[] = [];
  for await (const path of new Glob("**/*.ts").scan(SRC)) {
    if (REPOSITORY.test(path)) continue;
    const text = await Bun.file(join(SRC, path)).text();
    if (/\btablesOf\(|db\/tables(\/[a-z-]+)?\.ts"/.test(text)) outside.push(path);
  }
  expect(outside).toEqual([]);
});
