// Every link into the repository's documentation that Herald shows a person (the CLI's and the
// dashboard's texts: `README.md#…`, `docs/….md#…`) leads to a heading that exists.
import { describe, expect, test } from "bun:test";
import { Glob } from "bun";
import { CONNECTING_DOCS } from "../src/cli/resources.ts";

/** GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to hyphens. */
function slugOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

async function anchorsOf(file: string): Promise<Set<string>> {
  const text = await Bun.file(file).text();
  const headings = [...text.replace(/```[\s\S]*?```/g, "").matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => m[1]!);
  return new Set(headings.map(slugOf));
}

/** Every `file.md#anchor` the sources under `dir` put in a string for people to read. */
async function linksIn(dir: string): Promise<{ source: string; link: string }[]> {
  const links: { source: string; link: string }[] = [];
  for await (const path of new Glob("**/*.ts").scan(dir)) {
    const text = (await Bun.file(`${dir}/${path}`).text()).replace(/\/\*[\s\S]*?\*\/|^\s*\/\/.*$/gm, "");
    for (const m of text.matchAll(/\b((?:README|docs\/[\w/-]+)\.md#[\w-]+)/g))
      links.push({ source: `${dir}/${path}`, link: m[1]! });
  }
  return links;
}

describe("links into the documentation", () => {
  test("the slug of a heading is GitHub's", () => {
    expect(slugOf("What every network has in common")).toBe("what-every-network-has-in-common");
    expect(slugOf("The monthly X limit (`HERALD_X_MONTHLY_POST_LIMIT`)")).toBe(
      "the-monthly-x-limit-herald_x_monthly_post_limit",
    );
  });

  test("every link the CLI and the dashboard show leads to an existing heading", async () => {
    const links = [...(await linksIn("src/cli")), ...(await linksIn("src/http"))];
    expect(links.map((l) => l.link)).toContain(CONNECTING_DOCS);
    for (const { source, link } of links) {
      const [file, anchor] = link.split("#") as [string, string];
      const anchors = await anchorsOf(file);
      expect({ source, link, exists: anchors.has(anchor) }).toEqual({ source, link, exists: true });
    }
  });
});
