import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { waitFor } from '../helpers/wait.ts';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  at: number;
  /** The status this receiver answered with (0: it never answered). */
  answered: number;
}

/**
 * A real HTTP webhook receiver on 127.0.0.1: records every POST and answers with `status` (changeable;
 * 0 = hold the request open without answering, like a hung receiver).
 */
export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  status: number;
  /** Resolves once `count` requests matching `filter` have arrived. */
  waitFor(count: number, filter?: (hook: ReceivedWebhook) => boolean, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(path = '/hook'): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const receiver = { status: 200 } as WebhookReceiver;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const answered = receiver.status;
      received.push({
        headers: req.headers,
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
        at: Date.now(),
        answered,
      });
      if (answered !== 0) res.writeHead(answered, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}${path}`,
    received,
    waitFor: (count: number, filter: (hook: ReceivedWebhook) => boolean = () => true, timeoutMs = 20_000) =>
      waitUntil(
        () => {
          const matching = received.filter(filter);
          return matching.length >= count ? matching : undefined;
        },
        timeoutMs,
        `${count} webhook request(s)`,
      ),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  subject: string;
  /** The body, decoded from quoted-printable when the message says so. */
  text: string;
}

function bodyText(raw: string): string {
  const split = raw.indexOf('\r\n\r\n');
  const headers = raw.slice(0, split);
  const body = raw.slice(split + 4);
  if (!/^Content-Transfer-Encoding: quoted-printable/im.test(headers)) return body;
  const bytes = Buffer.from(
    body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))),
    'latin1',
  );
  return bytes.toString('utf8').replace(/\r\n/g, '\n');
}

/** A real SMTP server (npm smtp-server) on 127.0.0.1 that keeps every message. */
export interface SmtpReceiver {
  url: string;
  received: ReceivedMail[];
  waitFor(count: number, filter?: (mail: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

/** `port` 0 picks a free port; a fixed one lets a test bring a server back where a client expects it. */
export async function startSmtpReceiver(port = 0): Promise<SmtpReceiver> {
  const received: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const subject = /^Subject: (.*(?:\r\n[ \t].*)*)/m.exec(raw)?.[1]?.replace(/\r\n[ \t]/g, ' ') ?? '';
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          subject,
          text: bodyText(raw),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${bound}`,
    received,
    waitFor: (count, filter = () => true, timeoutMs = 20_000) =>
      waitUntil(
        () => {
          const matching = received.filter(filter);
          return matching.length >= count ? matching : undefined;
        },
        timeoutMs,
        `${count} mail(s)`,
      ),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export async function waitUntil<T>(
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  return waitFor(check, what, { timeoutMs, everyMs: 20 });
}
