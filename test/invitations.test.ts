import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { createServer, type AddressInfo, type Socket } from "node:net";
import { SMTPServer } from "smtp-server";
import { tables } from "./helpers/tables.ts";
import { MAIL_MAX_ATTEMPTS, mailRetryDelayMs } from "../src/modules/mail/outbox.ts";
import { smtpTransport } from "../src/modules/mail/transport.ts";
import { expectProblem } from "./helpers/problems.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";

const { mailOutbox, users } = tables;

const DAY_MS = 24 * 60 * 60 * 1000;

/** One message received by the sink: the envelope and the raw RFC 5322 text. */
interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

/** A real SMTP server on 127.0.0.1 (random port) that keeps what it receives, or rejects every recipient. */
interface SmtpSink {
  url: string;
  port: number;
  messages: ReceivedMail[];
  /** RCPT TO commands seen (accepted or not). */
  recipients: string[];
  /** Credentials offered with AUTH. */
  logins: string[];
  close(): Promise<void>;
}

async function startSmtpSink(
  options: { rejectRecipients?: boolean; url?: (port: number) => string } = {},
): Promise<SmtpSink> {
  const messages: ReceivedMail[] = [];
  const recipients: string[] = [];
  const logins: string[] = [];
  const server = new SMTPServer({
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onAuth(auth, _session, callback) {
      logins.push(auth.username ?? "");
      callback(null, { user: auth.username });
    },
    onRcptTo(address, _session, callback) {
      recipients.push(address.address);
      if (options.rejectRecipients) {
        const error = Object.assign(new Error("mailbox unavailable"), { responseCode: 550 });
        return callback(error);
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString("utf8"),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: options.url ? options.url(port) : `smtp://127.0.0.1:${port}`,
    port,
    messages,
    recipients,
    logins,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The text of a message with quoted-printable soft breaks and escapes undone (enough for ASCII bodies). */
function decodedBody(raw: string): string {
  const body = raw.slice(raw.indexOf("\r\n\r\n") + 4);
  return body
    .replace(/=\r?\n/g, "")
    .replace(/=([0-9A-F]{2})/g, (_, hex) => String.fromCharCode(parseInt(hex, 16)));
}

let keyCounter = 0;
const invite = (
  s: TestServer,
  email: string,
  options: { key?: string; idempotencyKey?: string | null } = {},
) =>
  s.request("POST", "/v1/account/invitations", {
    key: options.key,
    headers:
      options.idempotencyKey === null
        ? {}
        : { "idempotency-key": options.idempotencyKey ?? `invite-${++keyCounter}` },
    body: { email },
  });

const outboxRows = (s: TestServer) => s.herald.db.select().from(mailOutbox).orderBy(mailOutbox.id);
const outboxRowFor = async (s: TestServer, invitationId: string) => {
  const [row] = await s.herald.db
    .select()
    .from(mailOutbox)
    .where(eq(mailOutbox.invitationId, Number(invitationId)));
  return row!;
};
const logLines = (s: TestServer) => s.logs.map((l) => JSON.parse(l) as Record<string, unknown>);

/**
 * An address of exactly `length` characters: a 64-character local part and a domain of labels of at most
 * 63.
 */
function addressOfLength(length: number): string {
  const local = "x".repeat(64);
  let domainLength = length - local.length - 1 - ".com".length;
  const labels: string[] = [];
  while (domainLength > 0) {
    const size = Math.min(63, domainLength);
    labels.push("a".repeat(size));
    domainLength -= size + 1; // the label and its dot
  }
  const address = `${local}@${labels.join(".")}.com`;
  if (address.length !== length) throw new Error(`cannot build an address of ${length} characters`);
  return address;
}

describe("without SMTP (the default)", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(async () => {
    await s.stop();
  });

  test("201 with the invitation resource; its e-mail waits in the outbox", async () => {
    const r = await invite(s, "new.member@example.com");
    expect(r.status).toBe(201);
    expect(r.headers.get("content-type")).toContain("application/json");
    expect(r.headers.get("etag")).toBeTruthy();
    const inv = r.body;
    expect(inv.id).toMatch(/^[0-9]+$/);
    expect(inv).toMatchObject({
      object: "account_invitation",
      email: "new.member@example.com",
      status: "pending",
    });
    expect(inv.created_at).toBe("2026-03-01T12:00:00.000Z");
    expect(Date.parse(inv.expires_at) - Date.parse(inv.created_at)).toBe(7 * DAY_MS);
    expect(inv.delivery).toEqual({ status: "pending", requested_at: inv.created_at });
    expect(Object.keys(inv).sort()).toEqual([
      "created_at",
      "delivery",
      "email",
      "expires_at",
      "id",
      "invitation_url",
      "object",
      "role",
      "status",
    ]);

    const row = await outboxRowFor(s, inv.id);
    expect(row).toMatchObject({ toAddress: "new.member@example.com", status: "pending", attempts: 0 });
  });

  test("a warning says the invitation was not e-mailed", async () => {
    const r = await invite(s, "warned@example.com");
    expect(r.status).toBe(201);
    const warning = logLines(s).find((l) => l.level === "warn" && l.invitation_id === r.body.id);
    expect(warning).toBeDefined();
    expect(String(warning!.message)).toContain("HERALD_SMTP_URL");
  });

  test("the mail job sends nothing and leaves the outbox as it was", async () => {
    const r = await invite(s, "waiting@example.com");
    const before = await outboxRows(s);
    expect(before.length).toBeGreaterThan(0);
    await s.server.scheduler.runNow("mail-outbox");
    s.clock.advance(DAY_MS);
    await s.server.scheduler.runNow("mail-outbox");
    const after = await outboxRows(s);
    expect(after).toEqual(before);
    for (const row of after)
      expect(row).toMatchObject({ status: "pending", attempts: 0, sentAt: null, lastError: null });
    expect((await outboxRowFor(s, r.body.id)).status).toBe("pending");
    expect(s.server.scheduler.report().find((j) => j.id === "mail-outbox")!.last_error).toBeNull();
  });

  test("Idempotency-Key is required", async () => {
    const count = (await outboxRows(s)).length;
    const r = await invite(s, "nokey@example.com", { idempotencyKey: null });
    expectProblem(r, 400, "public_invalid_request");
    expect(r.body.errors[0].parameter).toBe("Idempotency-Key");
    expect((await outboxRows(s)).length).toBe(count);
  });

  test("the same Idempotency-Key and body replays the first invitation; another body is 409", async () => {
    const first = await invite(s, "retry@example.com", { idempotencyKey: "same-key" });
    const again = await invite(s, "retry@example.com", { idempotencyKey: "same-key" });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    // The link to pass on is shown once: the replay is the rest (test/team/invitation-link.test.ts).
    const { invitation_url: _shownOnce, ...rest } = first.body;
    expect(again.body).toEqual(rest);
    expect((await outboxRows(s)).filter((m) => m.toAddress === "retry@example.com").length).toBe(1);
    const other = await invite(s, "other@example.com", { idempotencyKey: "same-key" });
    expectProblem(other, 409, "public_idempotency_key_reused");
  });

  test("needs team:write", async () => {
    const readOnly = await s.createKey({ scopes: ["team:read", "workspaces:read", "workspaces:write"] });
    expectProblem(await invite(s, "scoped@example.com", { key: readOnly }), 403, "public_scope_missing");
    const writer = await s.createKey({ scopes: ["team:write"] });
    expect((await invite(s, "scoped@example.com", { key: writer })).status).toBe(201);
    const none = await s.request("POST", "/v1/account/invitations", {
      key: null,
      headers: { "idempotency-key": "k" },
      body: { email: "a@example.com" },
    });
    expectProblem(none, 401, "public_authentication_required");
  });
});

describe("invalid and conflicting addresses", () => {
  let s: TestServer;
  let ownerEmail: string;
  beforeAll(async () => {
    s = await startTestServer();
    const [owner] = await s.herald.db.select().from(users).where(eq(users.accountId, s.owner.accountId));
    ownerEmail = owner!.email;
  });
  afterAll(async () => {
    await s.stop();
  });

  test("an existing member's address is 409 public_conflict pointing at /email", async () => {
    const r = await invite(s, ownerEmail);
    expectProblem(r, 409, "public_conflict", ["/email"]);
    expect(r.body.category).toBe("conflict");
  });

  test("the member check ignores letter case", async () => {
    expectProblem(await invite(s, ownerEmail.toUpperCase()), 409, "public_conflict", ["/email"]);
  });

  test("a refused invitation stores nothing and frees its Idempotency-Key", async () => {
    const count = (await outboxRows(s)).length;
    expectProblem(await invite(s, ownerEmail, { idempotencyKey: "fix-me" }), 409, "public_conflict", [
      "/email",
    ]);
    expect((await outboxRows(s)).length).toBe(count);
    expect((await invite(s, "fixed@example.com", { idempotencyKey: "fix-me" })).status).toBe(201);
  });

  test("a member of another account can be invited", async () => {
    await s.bootstrap("elsewhere@example.com", "Other account");
    expect((await invite(s, "elsewhere@example.com")).status).toBe(201);
  });

  const bad: { name: string; body: unknown }[] = [
    { name: "not an address", body: { email: "not-an-address" } },
    { name: "no domain", body: { email: "someone@" } },
    { name: "spaces", body: { email: "some one@example.com" } },
    { name: "empty", body: { email: "" } },
    { name: "not a string", body: { email: 42 } },
    { name: "missing", body: {} },
  ];
  for (const c of bad) {
    test(`bad e-mail (${c.name}) is 400 at /email`, async () => {
      const r = await s.request("POST", "/v1/account/invitations", {
        headers: { "idempotency-key": `bad-${c.name}` },
        body: c.body,
      });
      expectProblem(r, 400, "public_invalid_request", ["/email"]);
    });
  }

  test("an unknown property is 400 at that property", async () => {
    const r = await s.request("POST", "/v1/account/invitations", {
      headers: { "idempotency-key": "extra" },
      body: { email: "a@example.com", name: "Someone" },
    });
    expectProblem(r, 400, "public_invalid_request", ["/name"]);
  });

  test("254 characters are accepted, 255 are not", async () => {
    const ok = addressOfLength(254);
    const tooLong = addressOfLength(255);
    expect(ok.length).toBe(254);
    expect(tooLong.length).toBe(255);
    const accepted = await invite(s, ok);
    expect(accepted.status).toBe(201);
    expect(accepted.body.email).toBe(ok);
    expectProblem(await invite(s, tooLong), 400, "public_invalid_request", ["/email"]);
  });
});

describe("with a real SMTP server", () => {
  let sink: SmtpSink;
  let s: TestServer;
  beforeAll(async () => {
    sink = await startSmtpSink();
    s = await startTestServer({
      env: { HERALD_SMTP_URL: sink.url, HERALD_MAIL_FROM: "Herald <herald@example.com>" },
      mail: smtpTransport(sink.url),
    });
  });
  afterAll(async () => {
    await s.stop();
    await sink.close();
  });

  test("the mail job sends the invitation once, to the invited address, naming the account", async () => {
    const r = await invite(s, "friend@example.com");
    expect(r.status).toBe(201);
    expect(r.body.delivery.status).toBe("pending");
    expect(logLines(s).some((l) => l.level === "warn" && l.invitation_id === r.body.id)).toBe(false);
    expect(sink.messages.length).toBe(0); // nothing is sent inside the request

    await s.server.scheduler.runNow("mail-outbox");
    expect(sink.messages.length).toBe(1);
    const mail = sink.messages[0]!;
    expect(mail.to).toEqual(["friend@example.com"]);
    expect(mail.from).toBe("herald@example.com");
    expect(mail.raw).toMatch(/^To: friend@example\.com\r?$/m);
    expect(mail.raw).toMatch(/^Subject: .*Test workspace/m);
    const body = decodedBody(mail.raw);
    expect(body).toContain('"Test workspace"');
    expect(body).toContain(r.body.id);

    const row = await outboxRowFor(s, r.body.id);
    expect(row).toMatchObject({ status: "sent", attempts: 1, lastError: null, sentAt: s.clock.now() });

    // A sent message is not sent again.
    await s.server.scheduler.runNow("mail-outbox");
    expect(sink.messages.length).toBe(1);
  });

  test("each invitation gets its own e-mail", async () => {
    const r = await invite(s, "second@example.com");
    await s.server.scheduler.runNow("mail-outbox");
    expect((await outboxRowFor(s, r.body.id)).status).toBe("sent");
    expect(sink.messages.map((m) => m.to[0])).toEqual(["friend@example.com", "second@example.com"]);
  });
});

describe("when SMTP fails", () => {
  test("a refusing server: retries back off, then the message is failed; nothing secret is logged", async () => {
    const password = "sup3r-secret-smtp-pass";
    const sink = await startSmtpSink({
      rejectRecipients: true,
      url: (port) => `smtp://herald:${password}@127.0.0.1:${port}`,
    });
    const s = await startTestServer({ env: { HERALD_SMTP_URL: sink.url }, mail: smtpTransport(sink.url) });
    try {
      const r = await invite(s, "bounce@example.com");
      expect(r.status).toBe(201);
      const start = s.clock.now();

      await s.server.scheduler.runNow("mail-outbox");
      expect(sink.recipients).toEqual(["bounce@example.com"]);
      expect(sink.logins).toEqual(["herald"]); // the URL's credentials were used
      let row = await outboxRowFor(s, r.body.id);
      expect(row).toMatchObject({
        status: "pending",
        attempts: 1,
        nextAttemptAt: start + mailRetryDelayMs(1),
      });
      expect(row.lastError).toBeTruthy();
      expect(mailRetryDelayMs(1)).toBe(30_000);

      // Not due yet: the job leaves it alone.
      s.clock.advance(mailRetryDelayMs(1) - 1);
      await s.server.scheduler.runNow("mail-outbox");
      expect((await outboxRowFor(s, r.body.id)).attempts).toBe(1);
      expect(sink.recipients.length).toBe(1);

      for (let attempt = 2; attempt <= MAIL_MAX_ATTEMPTS; attempt++) {
        s.clock.set((await outboxRowFor(s, r.body.id)).nextAttemptAt);
        await s.server.scheduler.runNow("mail-outbox");
        row = await outboxRowFor(s, r.body.id);
        expect(row.attempts).toBe(attempt);
        expect(sink.recipients.length).toBe(attempt);
        if (attempt < MAIL_MAX_ATTEMPTS) {
          expect(row.status).toBe("pending");
          expect(row.nextAttemptAt).toBe(s.clock.now() + mailRetryDelayMs(attempt));
        }
      }
      expect(row.status).toBe("failed");
      expect(row.sentAt).toBeNull();
      expect(sink.messages.length).toBe(0);

      // Failed for good: never tried again.
      s.clock.advance(30 * DAY_MS);
      await s.server.scheduler.runNow("mail-outbox");
      expect(sink.recipients.length).toBe(MAIL_MAX_ATTEMPTS);

      const warnings = logLines(s).filter(
        (l) => l.level === "warn" && String(l.message).startsWith("mail delivery failed"),
      );
      expect(warnings.length).toBe(MAIL_MAX_ATTEMPTS);
      expect(warnings.at(-1)!.message).toBe("mail delivery failed for good");
      expect(warnings.at(-1)!.attempts).toBe(MAIL_MAX_ATTEMPTS);
      const everything = s.logs.join("\n") + JSON.stringify(await outboxRows(s));
      expect(everything).not.toContain(password);
      expect(everything).not.toContain(encodeURIComponent(password));
      expect(everything).not.toContain(Buffer.from(password).toString("base64"));
    } finally {
      await s.stop();
      await sink.close();
    }
  });

  test("a closed port: the message stays pending with a retry scheduled", async () => {
    const sink = await startSmtpSink();
    const port = sink.port;
    await sink.close();
    const url = `smtp://user:closed-port-secret@127.0.0.1:${port}`;
    const s = await startTestServer({ env: { HERALD_SMTP_URL: url }, mail: smtpTransport(url) });
    try {
      const r = await invite(s, "nobody-home@example.com");
      await s.server.scheduler.runNow("mail-outbox");
      const row = await outboxRowFor(s, r.body.id);
      expect(row).toMatchObject({
        status: "pending",
        attempts: 1,
        nextAttemptAt: s.clock.now() + mailRetryDelayMs(1),
      });
      // The job itself did not fail: one message failing is a retry, not a job error.
      expect(s.server.scheduler.report().find((j) => j.id === "mail-outbox")!.last_error).toBeNull();
      const warning = logLines(s).find((l) => l.message === "mail delivery failed; will retry");
      expect(warning).toMatchObject({ level: "warn", attempts: 1 });
      expect(s.logs.join("\n")).not.toContain("closed-port-secret");
    } finally {
      await s.stop();
    }
  });

  test("a server that never answers times out instead of holding the mail job", async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket)); // accepts the connection, never greets
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const url = `smtp://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const s = await startTestServer({
      env: { HERALD_SMTP_URL: url },
      mail: smtpTransport(url, { connectionMs: 500, greetingMs: 500, socketMs: 500 }),
    });
    try {
      const r = await invite(s, "slow@example.com");
      const started = performance.now();
      await s.server.scheduler.runNow("mail-outbox");
      expect(performance.now() - started).toBeLessThan(5_000);
      const row = await outboxRowFor(s, r.body.id);
      expect(row).toMatchObject({
        status: "pending",
        attempts: 1,
        nextAttemptAt: s.clock.now() + mailRetryDelayMs(1),
      });
      expect(row.lastError).toMatch(/timeout|timed out|never received/i);
    } finally {
      await s.stop();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  }, 15_000);

  test("the backoff doubles from 30 s and stops growing at one hour", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8].map(mailRetryDelayMs)).toEqual([
      30_000, 60_000, 120_000, 240_000, 480_000, 960_000, 1_920_000, 3_600_000,
    ]);
    expect(mailRetryDelayMs(20)).toBe(3_600_000);
  });
});
