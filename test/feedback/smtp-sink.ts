import type { AddressInfo } from "node:net";
import { type ParsedMail, simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

/** A real SMTP server on 127.0.0.1 (random port) that parses what it receives, or refuses it. */
export interface SmtpSink {
  url: string;
  port: number;
  /** Messages accepted, parsed as a mail client would (headers, decoded text). */
  messages: ParsedMail[];
  /** How the next messages are answered: accepted, refused at RCPT TO (550) or after DATA (554). */
  mode: "accept" | "refuse_recipient" | "refuse_data";
  close(): Promise<void>;
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const sink = { messages: [] as ParsedMail[], mode: "accept" } as SmtpSink;
  const refusal = (message: string, responseCode: number) =>
    Object.assign(new Error(message), { responseCode });
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onRcptTo(_address, _session, callback) {
      if (sink.mode === "refuse_recipient") return callback(refusal("mailbox unavailable", 550));
      callback();
    },
    onData(stream, _session, callback) {
      simpleParser(stream).then(
        (parsed) => {
          if (sink.mode === "refuse_data") return callback(refusal("message refused by policy", 554));
          sink.messages.push(parsed);
          callback();
        },
        (error: Error) => callback(error),
      );
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  sink.port = (server.server.address() as AddressInfo).port;
  sink.url = `smtp://127.0.0.1:${sink.port}`;
  sink.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return sink;
}
