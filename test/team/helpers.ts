import { expect } from "bun:test";
import { smtpTransport } from "../../src/modules/mail/transport.ts";
import { startSmtpSink, type SmtpSink } from "../feedback/smtp-sink.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

/** A server that e-mails through a real SMTP sink. */
export async function startTeamServer(): Promise<{ s: TestServer; sink: SmtpSink; stop(): Promise<void> }> {
  const sink = await startSmtpSink();
  const s = await startTestServer({ env: { HERALD_SMTP_URL: sink.url }, mail: smtpTransport(sink.url) });
  return {
    s,
    sink,
    async stop() {
      await s.stop();
      await sink.close();
    },
  };
}

let counter = 0;

/** Invites an address (as the owner unless `key` is given); returns the answer. */
export function invite(s: TestServer, email: string, options: { role?: string; key?: string } = {}) {
  const body: Record<string, unknown> = { email };
  if (options.role) body.role = options.role;
  return s.request("POST", "/v1/account/invitations", {
    key: options.key,
    headers: { "idempotency-key": `team-${++counter}` },
    body,
  });
}

/** Sends the outbox and returns the path of the newest invitation link e-mailed to `email`. */
export async function invitationLink(s: TestServer, sink: SmtpSink, email: string): Promise<string> {
  await s.server.scheduler.runNow("mail-outbox");
  const wanted = email.toLowerCase();
  const mail = sink.messages
    .filter((m) =>
      JSON.stringify(m.to ?? "")
        .toLowerCase()
        .includes(wanted),
    )
    .at(-1);
  expect(mail).toBeDefined();
  const url = /(http:\/\/\S+\/invitations\/[A-Za-z0-9]+)/.exec(mail!.text ?? "")?.[1];
  expect(url).toBeDefined();
  return new URL(url!).pathname;
}
