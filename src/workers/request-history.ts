import type { Hono } from 'hono';
import type { AppEnv } from '../api-kit/context.ts';
import { ok } from '../api-kit/respond.ts';
import type { BackgroundService } from '../shared/background-service.ts';
import { LedgeError } from '../shared/errors.ts';
import type { FunctionSamples } from './function-samples.ts';
import { REQUEST_RANGES, SAMPLE_EVERY_MS, type RequestRange } from './function-samples.ts';
import type { FunctionMetricsCollector } from '../workerd/index.ts';
import type { WorkersService } from './service.ts';

/**
 * Requests and status classes per function over time: scrapes the runtime's counts every SAMPLE_EVERY_MS into
 * FunctionSamples (a BackgroundService), and answers
 * `GET /accounts/{a}/workers/scripts/{name}/requests/history?range=hour|day|week` (a Ledge extension, for the
 * dashboard's chart; Cloudflare has these figures in GraphQL analytics only).
 */
export class RequestHistory implements BackgroundService {
  readonly name = 'function request samples';
  readonly #collector: FunctionMetricsCollector;
  readonly #samples: FunctionSamples;
  readonly #everyMs: number;
  #timer: NodeJS.Timeout | undefined;

  constructor(collector: FunctionMetricsCollector, samples: FunctionSamples, everyMs = SAMPLE_EVERY_MS) {
    this.#collector = collector;
    this.#samples = samples;
    this.#everyMs = everyMs;
  }

  start(): void {
    this.#timer = setInterval(() => void this.#collector.collect().catch(() => undefined), this.#everyMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    // What was counted since the last scrape is kept.
    await this.#collector.collect().catch(() => undefined);
  }

  async series(accountId: string, script: string, range: string) {
    if (!Object.hasOwn(REQUEST_RANGES, range)) throw new LedgeError(400, 10021, 'range must be hour, day or week');
    const chosen = range as RequestRange;
    // Scraped first: the chart shows requests up to this one, not up to the last tick.
    await this.#collector.collect().catch(() => undefined);
    return {
      script_name: script,
      range: chosen,
      step_seconds: REQUEST_RANGES[chosen].step,
      points: await this.#samples.series(accountId, script, chosen),
    };
  }

  forget(accountId: string, script: string): Promise<void> {
    return this.#samples.forget(accountId, script);
  }
}

export function mountRequestHistoryRoute(app: Hono<AppEnv>, workers: WorkersService, history: RequestHistory): void {
  app.get('/accounts/:account_id/workers/scripts/:script/requests/history', async (c) => {
    const account = c.req.param('account_id');
    const script = c.req.param('script');
    await workers.requireScript(account, script);
    return ok(c, await history.series(account, script, c.req.query('range') ?? 'hour'));
  });
}
