// Stored mail holds no usable token: the outbox keeps each message's text with its links replaced by
// a marker, and the whole text only sealed (SecretBox) until it is sent or given up. The mail the
// SMTP server receives still carries a working link. Read on the run's engine (SQLite, or PostgreSQL
// under scripts/test-postgres.sh), and in an export and a backup of the installation.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { inTransaction } from "../../src/db/transaction.ts";
import { LINK_REMOVED, withoutLinks } from "../../src/modules/mail/outbox.ts";
import { requestEmailConfirmation } from "../../src/modules/signup/confirmation.ts";
import { exportInstallation } from "../../src/modules/transfer/export.ts";
import { takeBackup } from "../../src/modules/backup/backup.ts";
import { TestBrowser } from "../helpers/browser.ts";
import { POSTGRES_URL } from "../helpers/database.ts";
import { tables } from "../helpers/tables.ts";
import type { TestServer } from "../helpers/server.ts";
import type { SmtpSink } from "../feedback/smtp-sink.ts";
import { invite, startTeamServer } from "../team/helpers.ts";

const { mailOutbox, users } = tables;

let s: TestServer;
let sink: SmtpSink;
let stop: () => Promise<void>;
const work = mkdtempSync(join(tmpdir(), "herald-mail-at-rest-"));
beforeAll(async () => {
  ({ s, sink, stop } = await startTeamServer());
});
afterAll(async () => {
  await stop();
  rmSync(work, { recursive: true, force: true });
});

/** The rows of the outbox addressed to `to`, as the database holds them. */
const rowsTo = (to: string) => s.herald.db.select().from(mailOutbox).where(eq(mailOutbox.toAddress, to));

/** The one-time links of the newest message the SMTP server received for `to`. */
function linksMailedTo(to: string): string[] {
  const mail = sink.messages.filter((m) => JSON.stringify(m.to ?? "").includes(to)).at(-1);
  expect(mail).toBeDefined();
  return [...(mail!.text ?? "").matchAll(/https?:\/\/\S+/g)].map((m) => m[0]);
}

/** The token of a link: its last path segment. */
const tokenOf = (link: string) => new URL(link).pathname.split("/").at(-1)!;

describe("an owner invitation", () => {
  test("waiting: the kept text has the marker, the token is only in the sealed text", async () => {
    expect((await invite(s, "waiting@example.com", { role: "owner" })).status).toBe(201);
    const [row] = await rowsTo("waiting@example.com");
    expect(row!.status).toBe("pending");
    expect(row!.textBody).toContain(LINK_REMOVED);
    expect(row!.textBody).not.toContain("://");
    expect(row!.sealedBody).toStartWith("v1.");
    // The sealed text opens with the installation's key only, and holds the link.
    expect(s.herald.secrets.decrypt(row!.sealedBody!)).toMatch(/\/invitations\/[A-Za-z0-9]{43}/);
  });

  test("sent: the mail has a working link; the row holds no token, and neither does an export", async () => {
    expect((await invite(s, "owner-to-be@example.com", { role: "owner" })).status).toBe(201);
    await s.server.scheduler.runNow("mail-outbox");
    const [link] = linksMailedTo("owner-to-be@example.com");
    expect(link).toMatch(/\/invitations\/[A-Za-z0-9]{43}$/);
    const token = tokenOf(link!);

    const [row] = await rowsTo("owner-to-be@example.com");
    expect(row).toMatchObject({ status: "sent", sealedBody: null });
    expect(JSON.stringify(row)).not.toContain(token);
    expect(row!.textBody).toContain(`Accept the invitation and choose your password here:\n${LINK_REMOVED}`);

    const file = join(work, "export.jsonl");
    await exportInstallation(s.herald, file);
    const exported = readFileSync(file, "utf8");
    expect(exported).toContain(LINK_REMOVED);
    expect(exported).not.toContain(token);

    // A backup has none either. Read as bytes on SQLite (the database file sits in the tar as is);
    // PostgreSQL's is a compressed pg_dump of the rows read above.
    if (!POSTGRES_URL) {
      const backup = join(work, "backup.tar");
      await takeBackup(s.herald.config, backup);
      const bytes = readFileSync(backup);
      expect(bytes.includes(Buffer.from("owner-to-be@example.com"))).toBe(true);
      expect(bytes.includes(Buffer.from(token))).toBe(false);
    }

    // The link in the mail still works: the invitation page asks for a name and password.
    const page = await new TestBrowser(s).get(new URL(link!).pathname);
    expect(page.status).toBe(200);
  });

  test("revoked before it went out: given up, its sealed text is gone", async () => {
    const created = (await invite(s, "withdrawn@example.com")).body;
    const revoked = await s.request("POST", `/v1/account/invitations/${created.id}/revoke`, {
      body: { confirmed: true },
    });
    expect(revoked.status).toBe(200);
    const [row] = await rowsTo("withdrawn@example.com");
    expect(row).toMatchObject({ status: "failed", sealedBody: null });
    expect(row!.textBody).not.toContain("://");
  });

  test("refused by the SMTP server until the last attempt: given up, its sealed text is gone", async () => {
    sink.mode = "refuse_recipient";
    try {
      expect((await invite(s, "refused@example.com")).status).toBe(201);
      for (let i = 0; i < 10; i++) {
        s.clock.advance(2 * 60 * 60 * 1000);
        await s.server.scheduler.runNow("mail-outbox");
      }
    } finally {
      sink.mode = "accept";
    }
    const [row] = await rowsTo("refused@example.com");
    expect(row).toMatchObject({ status: "failed", sealedBody: null });
  });
});

test("a confirmation mail: the link works from the mail, the row keeps none", async () => {
  const [owner] = await s.herald.db.select().from(users).where(eq(users.accountId, s.owner.accountId));
  const email = "confirm-me@example.com";
  await inTransaction(s.herald.db, (tx) =>
    requestEmailConfirmation(
      s.herald,
      tx,
      { userId: owner!.id, accountId: s.owner.accountId, email },
      s.clock.now(),
    ),
  );
  await s.server.scheduler.runNow("mail-outbox");
  const link = linksMailedTo(email).find((l) => l.includes("/confirm-email/"))!;
  const [row] = await rowsTo(email);
  expect(row).toMatchObject({ status: "sent", sealedBody: null });
  expect(JSON.stringify(row)).not.toContain(tokenOf(link));
  expect((await new TestBrowser(s).get(new URL(link).pathname)).status).toBe(200);
});

test("a message queued before sealing is rewritten at start: sealed if waiting, links removed either way", async () => {
  const legacyLink = `${s.url}/invitations/${"L".repeat(43)}`;
  const now = s.clock.now();
  const legacy = (id: string, to: string, status: "pending" | "sent") => ({
    id,
    toAddress: to,
    subject: "Legacy",
    textBody: `Join here:\n${legacyLink}\n`,
    status,
    nextAttemptAt: now,
    createdAt: now,
  });
  await inTransaction(s.herald.db, async (tx) => {
    await tx
      .insert(mailOutbox)
      .values(legacy("mail_legacy_waiting", "legacy-waiting@example.com", "pending"));
    await tx.insert(mailOutbox).values(legacy("mail_legacy_sent", "legacy-sent@example.com", "sent"));
  });
  // A new process runs the outbox job for the first time.
  const { deliverDueMail } = await import("../../src/modules/mail/outbox.ts");
  const fresh = { ...s.herald };
  await deliverDueMail(fresh);
  const [sent] = await rowsTo("legacy-sent@example.com");
  expect(sent).toMatchObject({ status: "sent", sealedBody: null, textBody: `Join here:\n${LINK_REMOVED}\n` });
  const [waiting] = await rowsTo("legacy-waiting@example.com");
  expect(waiting).toMatchObject({
    status: "sent",
    sealedBody: null,
    textBody: `Join here:\n${LINK_REMOVED}\n`,
  });
  expect(linksMailedTo("legacy-waiting@example.com")).toEqual([legacyLink]);
});

test("a kept text whose `://` is no link is read once by the rewrite, which then ends", async () => {
  const now = s.clock.now();
  await inTransaction(s.herald.db, (tx) =>
    tx.insert(mailOutbox).values({
      id: "mail_no_link",
      toAddress: "no-link@example.com",
      subject: "No link",
      textBody: "Not a link: a://\n",
      status: "sent",
      nextAttemptAt: now,
      createdAt: now,
    }),
  );
  const { sealLegacyMail } = await import("../../src/modules/mail/outbox.ts");
  expect(await sealLegacyMail(s.herald)).toBe(1);
  const [row] = await rowsTo("no-link@example.com");
  expect(row).toMatchObject({ status: "sent", sealedBody: null, textBody: "Not a link: a://\n" });
});

test("withoutLinks replaces every link, with its query, and leaves the rest", () => {
  expect(withoutLinks("Open https://h.example/a/b?token=x#f now, or http://h.example.")).toBe(
    `Open ${LINK_REMOVED} now, or ${LINK_REMOVED}`,
  );
  expect(withoutLinks("Not a link: a://\nhttps://h.example/x\n")).toBe(`Not a link: a://\n${LINK_REMOVED}\n`);
  expect(withoutLinks("Plain text only.")).toBe("Plain text only.");
});
