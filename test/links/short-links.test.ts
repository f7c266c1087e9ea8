// The text side of tracked links: which URLs are rewritten, the text as sent, and the redirect target.
import { describe, expect, test } from "bun:test";
import type { Herald } from "../../src/herald.ts";
import {
  publishedText,
  redirectTarget,
  textAsSent,
  trackableUrls,
} from "../../src/modules/links/short-links.ts";

const h = { config: { baseUrl: "https://herald.example" } } as Herald;
const presets = { enabled: true, utm_source: "herald", utm_medium: "social media", utm_campaign: null };

describe("the URLs of a body", () => {
  test("found as the networks link them: trailing punctuation and an unopened ) are not part of one", () => {
    expect(
      trackableUrls(h, [
        "See https://a.example/x. And (https://b.example/y) or http://c.example/z?q=1!",
        "Again https://a.example/x, and mail@https://no.example stays",
      ]),
    ).toEqual(["https://a.example/x", "https://b.example/y", "http://c.example/z?q=1"]);
  });

  test("one of this server's short links is left as it is", () => {
    const body = ["Already short https://herald.example/l/AbCdEfGhIj"];
    expect(trackableUrls(h, body)).toEqual([]);
    expect(textAsSent(h, body[0]!)).toBe(body[0]!);
  });

  test("the text as sent replaces every URL with its short URL, the rest kept", () => {
    const links = new Map([["https://a.example/x", "https://herald.example/l/0123456789"]]);
    expect(publishedText(h, "Go (https://a.example/x). Now https://a.example/x!", links)).toBe(
      "Go (https://herald.example/l/0123456789). Now https://herald.example/l/0123456789!",
    );
    expect(textAsSent(h, "x https://a.example/a/very/long/path y")).toBe(
      "x https://herald.example/l/0000000000 y",
    );
  });
});

describe("the redirect target", () => {
  test("UTM presets after the URL's own query, the fragment kept, values encoded", () => {
    expect(redirectTarget("https://a.example/p", presets)).toBe(
      "https://a.example/p?utm_source=herald&utm_medium=social%20media",
    );
    expect(redirectTarget("https://a.example/p?x=1#top", presets)).toBe(
      "https://a.example/p?x=1&utm_source=herald&utm_medium=social%20media#top",
    );
    expect(redirectTarget("https://a.example/p?", presets)).toBe(
      "https://a.example/p?utm_source=herald&utm_medium=social%20media",
    );
    expect(redirectTarget("https://a.example/p?x=1&", presets)).toBe(
      "https://a.example/p?x=1&utm_source=herald&utm_medium=social%20media",
    );
  });

  test("a parameter the URL has is kept as written; nothing to add leaves the URL as it is", () => {
    expect(redirectTarget("https://a.example/p?UTM_X=1&utm_source=Mine+Own", presets)).toBe(
      "https://a.example/p?UTM_X=1&utm_source=Mine+Own&utm_medium=social%20media",
    );
    expect(redirectTarget("https://a.example/p?q=a%20b", null)).toBe("https://a.example/p?q=a%20b");
  });
});
