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

/** An SMTP transport from a `smtp://user:pass@host:port` or `smtps://…` URL. */
export function smtpTransport(url: string): MailTransport {
  const transporter = nodemailer.createTransport(url, { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 } as never);
  return {
    async send(message) {
      await transporter.sendMail(message);
    },
  };
}
