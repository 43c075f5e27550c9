import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { TEST_CREDENTIALS } from '../helpers/ledge.ts';

export const AUTH = { authorization: `Bearer ${TEST_CREDENTIALS.apiToken}` };

export interface StreamedAnswer {
  status: number;
  text: string;
  /** Body bytes handed to the socket before the answer came (or the connection closed). */
  sent: number;
}

/**
 * Sends `head` and then `fillBytes` filler bytes in 1 MiB writes (chunked unless a Content-Length
 * header is given), honouring back-pressure, and settles with the answer as soon as it arrives: a
 * server that refuses the body early answers while most of it is still unsent.
 */
export function streamBody(
  url: string,
  init: { method: string; headers: Record<string, string | number>; head?: string; fillBytes: number },
): Promise<StreamedAnswer> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    // A connection of its own: a refused body leaves the connection unusable for another request.
    const req = httpRequest(url, { method: init.method, headers: init.headers, agent: false });
    req.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), sent });
        req.destroy();
      });
      res.on('error', reject);
    });
    req.on('error', (error) => {
      if (!answered) reject(new Error(`${error.message} after ${sent} bytes sent`, { cause: error }));
    });
    const filler = Buffer.alloc(1024 * 1024, 0x61);
    let remaining = init.fillBytes;
    const pump = () => {
      while (remaining > 0 && !answered && !req.destroyed) {
        const chunk = remaining >= filler.length ? filler : filler.subarray(0, remaining);
        remaining -= chunk.length;
        sent += chunk.length;
        if (!req.write(chunk)) {
          req.once('drain', pump);
          return;
        }
      }
      if (remaining === 0 && !answered && !req.destroyed) req.end();
    };
    if (init.head) {
      req.write(init.head);
      sent += Buffer.byteLength(init.head);
    }
    pump();
  });
}

/** The multipart head of a script upload whose module part is then filled with `a`s. */
export function uploadHead(boundary: string): string {
  const metadata = JSON.stringify({ main_module: 'w.js', compatibility_date: '2025-01-01' });
  return (
    `--${boundary}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n${metadata}\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="w.js"; filename="w.js"\r\n` +
    'Content-Type: application/javascript+module\r\n\r\n'
  );
}

/** Resident memory of a process, from /proc (Linux). */
export function rssBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1] ?? 0) * 1024;
}

/** Samples a process's RSS every 20 ms while `work` runs; returns the work's result and the peak. */
export async function peakRssDuring<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; peak: number }> {
  let peak = rssBytes(pid);
  const timer = setInterval(() => (peak = Math.max(peak, rssBytes(pid))), 20);
  try {
    const result = await work();
    peak = Math.max(peak, rssBytes(pid));
    return { result, peak };
  } finally {
    clearInterval(timer);
  }
}

/** Opens a TCP connection and sends `text` (for partial requests); resolves once connected. */
export function rawSocket(port: number, text: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(text);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/** Resolves when the socket is closed by the other side (or `ms` passed: resolves false). */
export function closedWithin(socket: Socket, ms: number): Promise<boolean> {
  if (socket.destroyed || socket.readableEnded) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    const done = () => {
      clearTimeout(timer);
      resolve(true);
    };
    socket.once('close', done);
    socket.once('end', done);
    socket.resume();
  });
}
