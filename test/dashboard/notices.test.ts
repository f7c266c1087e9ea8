// The status messages after a redirect: every notice a dashboard redirect can carry has a text in the one
// table (src/http/dashboard/notices.ts), and the page it lands on shows that text as a status message.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Glob } from "bun";
import { NOTICES, type NoticePage } from "../../src/http/dashboard/notices.ts";
import { dashboardWorld, type DashboardWorld, noticesOf, type TestBrowser } from "./support.ts";

const SOURCES = "src/http";

/** Each source file of the HTTP layer with its text. */
async function sources(): Promise<{ path: string; text: string }[]> {
  const files: { path: string; text: string }[] = [];
  for await (const path of new Glob("**/*.ts").scan(SOURCES))
    files.push({ path: `${SOURCES}/${path}`, text: await Bun.file(`${SOURCES}/${path}`).text() });
  return files;
}

/** The top-level arguments of every call that starts with `opening` in `code`, as source text. */
function callsOf(code: string, opening: string): string[][] {
  const calls: string[][] = [];
  for (let at = code.indexOf(opening); at >= 0; at = code.indexOf(opening, at + 1)) {
    const args: string[] = [];
    let depth = 0;
    let quote: string | null = null;
    let current = "";
    for (const ch of code.slice(at + opening.length)) {
      if (quote) {
        if (ch === quote) quote = null;
      } else if (ch === '"' || ch === "`") quote = ch;
      else if ("([{".includes(ch)) depth++;
      else if (")]}".includes(ch)) {
        if (depth === 0) break;
        depth--;
      } else if (ch === "," && depth === 0) {
        args.push(current.trim());
        current = "";
        continue;
      }
      current += ch;
    }
    args.push(current.trim());
    calls.push(args);
  }
  return calls;
}

/** The string literals of a piece of code (`"…"` only: codes are plain words). */
const literalsOf = (code: string) => [...code.matchAll(/"([^"]*)"/g)].map((m) => m[1]!);

describe("every notice a redirect carries has a text", () => {
  test("redirects name their notice only through withNotice, with a page and codes of the table", async () => {
    const uses: string[] = [];
    for (const { path, text } of await sources()) {
      if (path.endsWith("dashboard/notices.ts")) continue;
      // A query string built by hand would escape the table's type check.
      const code = text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");
      const handBuilt = [...code.matchAll(/[?&]notice=\$\{(\w+)\}|[?&]notice=([\w-]+)/g)].map((m) => m[0]);
      expect({ path, handBuilt }).toEqual({ path, handBuilt: [] });
      for (const args of callsOf(code, "withNotice(")) {
        // withNotice(path, "page", code, extra?): a code is a literal or a choice between literals.
        const [, page, codes] = args;
        const pageName = literalsOf(page ?? "")[0]!;
        expect(Object.keys(NOTICES)).toContain(pageName);
        const known = Object.keys(NOTICES[pageName as NoticePage]);
        // Of a choice `cond ? "a" : "b"`, the codes are the branches, not the condition.
        const choice = codes?.includes("?") ? codes.slice(codes.lastIndexOf("?") + 1) : (codes ?? "");
        for (const c of literalsOf(choice)) {
          expect({ page: pageName, code: c, known: known.includes(c) }).toEqual({
            page: pageName,
            code: c,
            known: true,
          });
          uses.push(`${pageName}:${c}`);
        }
      }
    }
    // The scan found the redirects it is meant to check (the compose page's "created" among them).
    expect(uses).toContain("post:created");
    expect(uses.length).toBeGreaterThan(15);
  });

  test("every text of the table is a sentence", () => {
    for (const [page, texts] of Object.entries(NOTICES))
      for (const [code, text] of Object.entries(texts))
        expect({ page, code, text }).toEqual({ page, code, text: expect.stringMatching(/^[A-Z].{8,}[.]$/) });
  });
});

describe("the page a notice lands on shows its text as a status message", () => {
  let world: DashboardWorld;
  let owner: TestBrowser;
  beforeAll(async () => {
    world = await dashboardWorld();
    owner = await world.signedIn();
  });
  afterAll(() => world.stop());

  test("each page's notices, read as a person reads them", async () => {
    const ws = `/dashboard/workspaces/${world.owner.workspaceId}`;
    const pages: Partial<Record<NoticePage, string>> = {
      posts: `${ws}/posts?view=drafts`,
      destinations: `${ws}/destinations`,
      "workspace-settings": `${ws}/settings`,
      keys: "/dashboard/keys",
      team: "/dashboard/team",
      billing: "/dashboard/billing",
      webhooks: `${ws}/webhooks`,
    };
    for (const [page, path] of Object.entries(pages) as [NoticePage, string][]) {
      for (const [code, text] of Object.entries(NOTICES[page])) {
        const r = await owner.get(`${path}${path.includes("?") ? "&" : "?"}notice=${code}`);
        expect({ page, code, status: r.status, notices: noticesOf(r) }).toEqual({
          page,
          code,
          status: 200,
          notices: [text],
        });
      }
    }
  });

  test("an unknown notice shows nothing", async () => {
    const r = await owner.get("/dashboard/keys?notice=toString");
    expect(noticesOf(r)).toEqual([]);
  });
});
