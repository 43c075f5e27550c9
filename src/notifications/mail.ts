import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Transporter } from 'nodemailer';
import { newId } from '../shared/ids.ts';
import type { Clock } from '../shared/clock.ts';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** A message before it is addressed: one is stored per alert and sent to each recipient. */
export type MailContent = Omit<MailMessage, 'to'>;

/** Where outgoing notification mail goes: a real SMTP server, or the local mailbox in the data dir. */
export interface Mailer {
  /** Human description for logs and history ("smtp://mail.example:25", "local mailbox"). */
  readonly description: string;
  send(message: MailMessage): Promise<void>;
  close(): void;
}

export const MAIL_FROM = 'Ledge Notifications <notifications@ledge.localhost>';

/** Sends through SMTP (`--smtp-url smtp://user:pass@host:port`), over a small pool of connections. */
export class SmtpMailer implements Mailer {
  readonly description: string;
  readonly #smtpUrl: string;
  readonly #timeoutMs: number;
  #transport: Promise<Transporter> | undefined;
  #closed = false;

  constructor(smtpUrl: string, options: { timeoutMs?: number } = {}) {
    const url = new URL(smtpUrl);
    this.description = `${url.protocol}//${url.host}`;
    this.#smtpUrl = smtpUrl;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
  }

  async send(message: MailMessage): Promise<void> {
    const transport = await (this.#transport ??= this.#createTransport());
    await transport.sendMail({ from: MAIL_FROM, to: message.to, subject: message.subject, text: message.text });
  }

  close(): void {
    this.#closed = true;
    void this.#transport?.then((transport) => transport.close()).catch(() => undefined);
  }

  /** nodemailer (~40 modules) is loaded with the first mail, not at server start-up. */
  async #createTransport(): Promise<Transporter> {
    if (this.#closed) throw new Error('the mailer is closed');
    const { default: nodemailer } = await import('nodemailer');
    const timeout = this.#timeoutMs;
    return nodemailer.createTransport({
      url: this.#smtpUrl,
      pool: true,
      maxConnections: 4,
      connectionTimeout: timeout,
      greetingTimeout: timeout,
      socketTimeout: timeout,
    } as Parameters<typeof nodemailer.createTransport>[0]);
  }
}

export interface StoredMail extends MailMessage {
  id: string;
  from: string;
  date: string;
}

/**
 * Without SMTP, mail lands as one JSON file per message in `<data-dir>/mail`, written atomically
 * (temp file + rename) so `ledge mail list` never reads half a message.
 */
export class LocalMailbox implements Mailer {
  readonly description = 'local mailbox';
  readonly #dir: string;

  readonly #clock: Clock;

  /** `clock` dates the messages written. */
  constructor(dir: string, clock: Clock) {
    this.#dir = dir;
    this.#clock = clock;
  }

  async send(message: MailMessage): Promise<void> {
    mkdirSync(this.#dir, { recursive: true, mode: 0o700 });
    const date = new Date(this.#clock.now());
    // Sortable names: listing the directory gives the messages in the order they were written.
    const id = `${date.getTime().toString().padStart(15, '0')}-${newId().slice(0, 12)}`;
    const stored: StoredMail = { id, from: MAIL_FROM, date: date.toISOString(), ...message };
    const path = join(this.#dir, `${id}.json`);
    writeFileSync(`${path}.tmp`, JSON.stringify(stored, null, 2), { mode: 0o600 });
    renameSync(`${path}.tmp`, path);
  }

  list(): StoredMail[] {
    let names: string[];
    try {
      names = readdirSync(this.#dir);
    } catch {
      return [];
    }
    return names
      .filter((name) => name.endsWith('.json'))
      .sort()
      .map((name) => JSON.parse(readFileSync(join(this.#dir, name), 'utf8')) as StoredMail);
  }

  get(id: string): StoredMail | undefined {
    if (!/^[0-9a-f-]+$/.test(id)) return undefined;
    try {
      return JSON.parse(readFileSync(join(this.#dir, `${id}.json`), 'utf8')) as StoredMail;
    } catch {
      return undefined;
    }
  }

  close(): void {}
}

export function createMailer(options: { smtpUrl?: string | undefined; mailDir: string; clock: Clock }): Mailer {
  return options.smtpUrl ? new SmtpMailer(options.smtpUrl) : new LocalMailbox(options.mailDir, options.clock);
}
