import nodemailer from "nodemailer";

/** One outgoing e-mail. */
export interface MailMessage {
  from: string;
  to: string;
  subject: string;
  text: string;
}

/** Something that delivers mail; throws when the server refuses or cannot be reached. */
export interface MailTransport {
  send(message: MailMessage): Promise<void>;
}

/** How long an SMTP exchange may wait, so one silent server cannot hold the mail job. */
export interface SmtpTimeouts {
  /** TCP connection established. */
  connectionMs: number;
  /** Server greeting after connecting. */
  greetingMs: number;
  /** Silence on an open connection. */
  socketMs: number;
}

const DEFAULT_TIMEOUTS: SmtpTimeouts = { connectionMs: 10_000, greetingMs: 10_000, socketMs: 20_000 };

/** An SMTP transport from a `smtp://user:pass@host:port` or `smtps://…` URL. */
export function smtpTransport(url: string, timeouts: Partial<SmtpTimeouts> = {}): MailTransport {
  const t = { ...DEFAULT_TIMEOUTS, ...timeouts };
  // The URL goes inside the options object: a second argument to createTransport would be taken
  // as message defaults, and the timeouts silently ignored.
  const transporter = nodemailer.createTransport({
    url,
    connectionTimeout: t.connectionMs,
    greetingTimeout: t.greetingMs,
    socketTimeout: t.socketMs,
  });
  return {
    async send(message) {
      await transporter.sendMail(message);
    },
  };
}
