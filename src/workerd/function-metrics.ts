import { request } from 'node:http';
import { statusClass, type LedgeMetrics } from '../shared/ledge-metrics.ts';
import type { IsolateCounts } from './isolate/contract.ts';

/** What one script's counters grew by since the last scrape (the product keeps it, e.g. as request samples). */
export interface FunctionGrowth {
  account: string;
  script: string;
  requests: number;
  exceptions: number;
  status: number[];
}

/** A scrape of one process waits at most this long (a process spinning in a script cannot answer). */
const SCRAPE_TIMEOUT_MS = 1_000;

interface ScriptCounts extends IsolateCounts {
  a: string;
  s: string;
}

/**
 * Pulls the per-script counts every workerd process keeps in memory (isolate/metrics.ts) through its ping
 * socket when /metrics is scraped, and adds what grew since the last scrape to Ledge's counters, so
 * they stay monotonic across redeploys and restarts (each process has its own ping socket: a new
 * process starts from zero). What a process counted after the last scrape before it exited is lost.
 */
export class FunctionMetricsCollector {
  readonly #metrics: LedgeMetrics | undefined;
  readonly #pingSockets: () => string[];
  /** Told what grew at each scrape (the dashboard's per-function samples, function-samples.ts). */
  readonly #onGrowth: ((growth: FunctionGrowth[]) => Promise<void>) | undefined;
  /** Last counts seen, by ping socket, then by `account/script`. */
  #last = new Map<string, Map<string, ScriptCounts>>();
  /** Scrapes run one at a time: two overlapping ones would both add the same growth. */
  #queue: Promise<void> = Promise.resolve();

  constructor(
    metrics: LedgeMetrics | undefined,
    pingSockets: () => string[],
    onGrowth?: (growth: FunctionGrowth[]) => Promise<void>,
  ) {
    this.#metrics = metrics;
    this.#pingSockets = pingSockets;
    this.#onGrowth = onGrowth;
  }

  collect(): Promise<void> {
    const run = this.#queue.then(() => this.#collect());
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #collect(): Promise<void> {
    const sockets = this.#pingSockets();
    const scraped = await Promise.all(sockets.map((socket) => scrapeProcess(socket).catch(() => undefined)));
    const next = new Map<string, Map<string, ScriptCounts>>();
    const growth: FunctionGrowth[] = [];
    sockets.forEach((socket, index) => {
      const previous = this.#last.get(socket);
      const counts = scraped[index];
      // Unanswered (busy, starting, exiting): keep what was seen, the next scrape adds the difference.
      if (!counts) {
        if (previous) next.set(socket, previous);
        return;
      }
      const seen = new Map<string, ScriptCounts>();
      for (const entry of counts) {
        const key = `${entry.a}/${entry.s}`;
        growth.push(this.#add(entry, previous?.get(key)));
        seen.set(key, entry);
      }
      next.set(socket, seen);
    });
    this.#last = next;
    // After the counts are taken as seen: a failed write loses these samples, never doubles them.
    await this.#onGrowth?.(growth);
  }

  #add(now: ScriptCounts, before: ScriptCounts | undefined): FunctionGrowth {
    const diff = (a: number, b: number | undefined) => Math.max(0, a - (b ?? 0));
    const labels = { account: now.a, script: now.s };
    const requests = diff(now.requests, before?.requests);
    const exceptions = diff(now.exceptions, before?.exceptions);
    const status = now.status.map((count, i) => diff(count, before?.status[i]));
    const metrics = this.#metrics;
    if (metrics) {
      const ok = requests - exceptions;
      if (ok > 0) metrics.functionRequests.inc({ ...labels, outcome: 'ok' }, ok);
      if (exceptions > 0) metrics.functionRequests.inc({ ...labels, outcome: 'exception' }, exceptions);
      status.forEach((grew, i) => {
        if (grew > 0) metrics.functionResponses.inc({ ...labels, status_class: statusClass((i + 1) * 100) }, grew);
      });
      const buckets = now.buckets.map((count, i) => diff(count, before?.buckets[i]));
      if (buckets.some((n) => n > 0)) metrics.functionLatency.add(labels, buckets, diff(now.sum, before?.sum));
    }
    return { account: now.a, script: now.s, requests, exceptions, status };
  }
}

function scrapeProcess(socketPath: string): Promise<ScriptCounts[]> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path: '/metrics', timeout: SCRAPE_TIMEOUT_MS }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        try {
          const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
          resolve(Array.isArray(parsed) ? parsed.filter(isScriptCounts) : []);
        } catch (error) {
          reject(error as Error);
        }
      });
      response.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('metrics scrape timed out')));
    req.on('error', reject);
    req.end();
  });
}

function isScriptCounts(value: unknown): value is ScriptCounts {
  const v = value as Partial<ScriptCounts> | null;
  return (
    typeof v?.a === 'string' &&
    typeof v.s === 'string' &&
    typeof v.requests === 'number' &&
    typeof v.exceptions === 'number' &&
    Array.isArray(v.status) &&
    Array.isArray(v.buckets) &&
    typeof v.sum === 'number'
  );
}
