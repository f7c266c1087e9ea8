// The compose form's per-network fields come from each network's options schema: a first comment is
// a labelled text field (with the network's rules as its hint) on the four networks that publish
// one, and nowhere else.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { composeOptions } from "../../src/http/dashboard/compose-networks.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.stop();
});

test.each([
  ["facebook", "Up to 8000 characters."],
  ["instagram", "Up to 2200 characters, 30 hashtags and 5 @mentions."],
  ["linkedin", "Up to 1250 characters."],
  ["youtube", "Up to 10000 characters."],
])("%s: a 'First comment' text field with the network's rules", (channel, rules) => {
  const field = composeOptions(s.herald, channel)?.fields.find((f) => f.key === "first_comment");
  expect(field).toMatchObject({ kind: "text", label: "First comment" });
  expect((field as { hint?: string }).hint).toContain(rules);
});

test.each(["x", "bluesky", "mastodon", "threads", "tiktok"])("%s: no first comment field", (channel) => {
  const fields = composeOptions(s.herald, channel)?.fields ?? [];
  expect(fields.map((f) => f.key)).not.toContain("first_comment");
});
