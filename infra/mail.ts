import nodemailer, { type Transporter } from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import type { Config } from './config.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Sends one message; rejects when the SMTP server does not accept it. */
export interface MailSender {
  send(message: MailMessage): Promise<void>;
}

const senders = new WeakMap<Config, MailSender>();

/**
 * The mail sender of a configuration: SMTP over `SMTP_URL` (nodemailer), from
 * `MAIL_FROM`. Undefined when `SMTP_URL` is unset, so callers that must send fail
 * closed. One transport per configuration, shared by its callers.
 */
export function mailSender(config: Config): MailSender | undefined {
  if (!config.smtpUrl) return undefined;
  let sender = senders.get(config);
  if (!sender) senders.set(config, (sender = smtpSender(config.smtpUrl, config.mailFrom)));
  return sender;
}

export function smtpSender(url: string, from: string): MailSender {
  const options: SMTPTransport.Options = { url, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 };
  const transport: Transporter = nodemailer.createTransport(options);
  return {
    async send(message) {
      await transport.sendMail({ from, to: message.to, subject: message.subject, text: message.text });
    },
  };
}
