import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { tables } from "../helpers/tables.ts";
import { smtpTransport } from "../../src/modules/mail/transport.ts";
import { expectProblem } from "../helpers/problems.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { startSmtpSink, type SmtpSink } from "./smtp-sink.ts";

const { feedback } = tables;

const send = (s: TestServer, body: unknown, key?: string) => s.request("POST", "/v1/feedback", { key, body });
const stored = async (s: TestServer, id: string) =>
  (await s.herald.db.select().from(feedback).where(eq(feedback.id, id)))[0];
const allStored = (s: TestServer) => s.herald.db.select().from(feedback);

describe("with SMTP and HERALD_FEEDBACK_TO", () => {
  let sink: SmtpSink;
  let s: TestServer;
  beforeAll(async () => {
    sink = await startSmtpSink();
    s = await startTestServer({
      env: {
        HERALD_SMTP_URL: sink.url,
        HERALD_MAIL_FROM: "Herald <herald@example.com>",
        HERALD_FEEDBACK_TO: "operator@example.com",
      },
      mail: smtpTransport(sink.url),
    });
  });
  afterAll(async () => {
    await s.stop();
    await sink.close();
  });

  test("201 with the feedback resource; the e-mail went out during the request", async () => {
    const r = await send(s, { message: "Love the queue view.\nCould it show week numbers? ✨" });
    expect(r.status).toBe(201);
    expect(r.headers.get("etag")).toBeTruthy();
    expect(r.body).toEqual({
      object: "feedback",
      id: expect.stringMatching(/^fb_[0-9a-z]{26}$/),
      created_at: "2026-03-01T12:00:00.000Z",
    });
    expect(sink.messages.length).toBe(1);
    const mail = sink.messages[0]!;
    expect(mail.to).toMatchObject({ value: [{ address: "operator@example.com" }] });
    expect(mail.from).toMatchObject({ value: [{ address: "herald@example.com" }] });
    expect(mail.subject).toBe(`Herald feedback ${r.body.id}`);
    expect(mail.text).toContain("Love the queue view.\nCould it show week numbers? ✨");
    expect(mail.text).toContain(`Account: Test workspace (${s.owner.accountId})`);
    expect(mail.text).toContain(s.owner.credentialId);
    expect(await stored(s, r.body.id)).toMatchObject({
      status: "sent",
      sentAt: s.clock.now(),
      lastError: null,
      accountId: s.owner.accountId,
      credentialId: s.owner.credentialId,
    });
  });

  test("1 and 10,000 characters are accepted (counted as characters, not UTF-16 units)", async () => {
    expect((await send(s, { message: "x" })).status).toBe(201);
    expect((await send(s, { message: "é".repeat(10_000) })).status).toBe(201);
    expect((await send(s, { message: "😀".repeat(10_000) })).status).toBe(201);
  });

  const bad: { name: string; body: unknown; pointer: string }[] = [
    { name: "empty", body: { message: "" }, pointer: "/message" },
    { name: "only white space", body: { message: " \n\t " }, pointer: "/message" },
    { name: "10,001 characters", body: { message: "x".repeat(10_001) }, pointer: "/message" },
    { name: "10,001 emoji", body: { message: "😀".repeat(10_001) }, pointer: "/message" },
    { name: "not a string", body: { message: 42 }, pointer: "/message" },
    { name: "missing", body: {}, pointer: "/message" },
    { name: "an unknown property", body: { message: "hi", subject: "x" }, pointer: "/subject" },
  ];
  for (const c of bad) {
    test(`${c.name} is 400 at ${c.pointer}; nothing is stored or sent`, async () => {
      const count = (await allStored(s)).length;
      const mails = sink.messages.length;
      expectProblem(await send(s, c.body), 400, "public_invalid_request", [c.pointer]);
      expect((await allStored(s)).length).toBe(count);
      expect(sink.messages.length).toBe(mails);
    });
  }

  test("needs feedback:write", async () => {
    const key = await s.createKey({ scopes: ["team:read"] });
    expectProblem(await send(s, { message: "hi" }, key), 403, "public_scope_missing");
    const writer = await s.createKey({ scopes: ["feedback:write"] });
    expect((await send(s, { message: "hi" }, writer)).status).toBe(201);
  });

  for (const mode of ["refuse_recipient", "refuse_data"] as const) {
    test(`a server that refuses (${mode}): 503 retryable, the message is kept unsent`, async () => {
      sink.mode = mode;
      try {
        const before = new Set((await allStored(s)).map((f) => f.id));
        const r = await send(s, { message: "Please keep this" });
        expectProblem(r, 503, "public_unavailable");
        expect(r.body.retryable).toBe(true);
        expect(r.body.retry).toEqual({ safety: "safe", after: 60 });
        expect(r.headers.get("retry-after")).toBe("60");
        const kept = (await allStored(s)).filter((f) => !before.has(f.id));
        expect(kept.length).toBe(1);
        expect(kept[0]).toMatchObject({ message: "Please keep this", status: "unsent", sentAt: null });
        expect(kept[0]!.lastError).toMatch(mode === "refuse_recipient" ? /550|mailbox/ : /554|refused/);
      } finally {
        sink.mode = "accept";
      }
    });
  }
});

describe("when mail cannot be sent at all", () => {
  test("no SMTP configured: 503, stored unsent with the reason", async () => {
    const s = await startTestServer({ env: { HERALD_FEEDBACK_TO: "operator@example.com" } });
    try {
      const r = await send(s, { message: "Hello?" });
      expectProblem(r, 503, "public_unavailable");
      expect(r.body.retryable).toBe(true);
      const [row] = await allStored(s);
      expect(row).toMatchObject({ message: "Hello?", status: "unsent" });
      expect(row!.lastError).toContain("HERALD_SMTP_URL");
    } finally {
      await s.stop();
    }
  });

  test("SMTP but no HERALD_FEEDBACK_TO: 503, stored unsent, nothing sent", async () => {
    const sink = await startSmtpSink();
    const s = await startTestServer({ env: { HERALD_SMTP_URL: sink.url }, mail: smtpTransport(sink.url) });
    try {
      expectProblem(await send(s, { message: "Hello?" }), 503, "public_unavailable");
      expect((await allStored(s))[0]!.lastError).toContain("HERALD_FEEDBACK_TO");
      expect(sink.messages.length).toBe(0);
    } finally {
      await s.stop();
      await sink.close();
    }
  });

  test("a closed port: 503 and the message is kept; no credential reaches the logs", async () => {
    const sink = await startSmtpSink();
    await sink.close();
    const url = `smtp://user:feedback-secret@127.0.0.1:${sink.port}`;
    const s = await startTestServer({
      env: { HERALD_SMTP_URL: url, HERALD_FEEDBACK_TO: "operator@example.com" },
      mail: smtpTransport(url),
    });
    try {
      expectProblem(await send(s, { message: "Anyone there?" }), 503, "public_unavailable");
      expect((await allStored(s))[0]).toMatchObject({ status: "unsent" });
      expect(s.logs.join("\n")).not.toContain("feedback-secret");
    } finally {
      await s.stop();
    }
  });
});
