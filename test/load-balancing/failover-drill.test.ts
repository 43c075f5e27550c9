import { Agent } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { alerting, call } from '../notifications/api-helpers.ts';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../notifications/receivers.ts';
import {
  createLoadBalancer,
  createMonitor,
  createPool,
  createZone,
  NamedOrigin,
  trafficPort,
  trafficRequest,
} from './traffic-helpers.ts';
import { waitFor } from '../helpers/wait.ts';
import { PASSIVE_FAILURE_MS } from '../../src/proxy/endpoints.ts';

process.env['LEDGE_LB_MIN_INTERVAL'] = '1';

interface Sample {
  startedAt: number;
  endedAt: number;
  status: number;
  origin: string;
}

/**
 * The failover drill: two pools of real origins behind one load balancer, a 1 s monitor, steady load
 * from concurrent keep-alive clients. Pool 1's origins stop: traffic moves to pool 2; they come back:
 * traffic moves back; the health alert webhook fires both ways.
 */
describe('failover drill', () => {
  let ledge: TestLedge;
  let hooks: WebhookReceiver;
  const primary: NamedOrigin[] = [];
  const secondary: NamedOrigin[] = [];
  let pool1: string;
  const host = 'www.drill.test';
  const samples: Sample[] = [];
  let running = true;
  let load: Promise<void>[] = [];

  const poolEvent = (health: string) => (hook: ReceivedWebhook) => {
    const data = hook.body['data'] as Record<string, string> | undefined;
    return data?.['pool_id'] === pool1 && data['event_source'] === 'pool' && data['new_health'] === health;
  };

  beforeAll(async () => {
    hooks = await startWebhookReceiver();
    ledge = await startLedge();
    for (const name of ['p1-a', 'p1-b']) primary.push(await NamedOrigin.start(name));
    for (const name of ['p2-a', 'p2-b']) secondary.push(await NamedOrigin.start(name));
    const monitor = await createMonitor(ledge, { interval: 1, timeout: 1, retries: 0 });
    pool1 = await createPool(ledge, 'primary', primary, { monitor });
    const pool2 = await createPool(ledge, 'secondary', secondary, { monitor });
    const zone = await createZone(ledge, 'drill.test');
    await createLoadBalancer(ledge, zone, {
      name: host,
      default_pools: [pool1, pool2],
      fallback_pool: pool2,
      adaptive_routing: { failover_across_pools: true },
    });
    const hook = await call(ledge, 'POST', `${alerting(ledge)}/destinations/webhooks`, {
      name: 'drill',
      url: hooks.url,
    });
    const policy = await call(ledge, 'POST', `${alerting(ledge)}/policies`, {
      name: 'pool health',
      enabled: true,
      alert_type: 'load_balancing_health_alert',
      mechanisms: { webhooks: [{ id: (hook.body.result as { id: string }).id }] },
      filters: { pool_id: [pool1] },
    });
    expect(policy.status).toBe(200);

    const port = trafficPort(ledge);
    // Four clients, each on its own kept-alive connection, one request after the other.
    load = Array.from({ length: 4 }, async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      while (running) {
        const startedAt = Date.now();
        const answer = await trafficRequest(port, host, '/', { agent }).catch(() => ({ status: 0, body: '' }));
        samples.push({ startedAt, endedAt: Date.now(), status: answer.status, origin: answer.body });
        // The clients' pace: part of the traffic this test makes, not a wait for a result.
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      agent.destroy();
    });
  });
  afterAll(async () => {
    running = false;
    await Promise.all(load);
    await ledge.close();
    await hooks.close();
    for (const origin of [...primary, ...secondary]) await origin.stop();
  });

  it('moves traffic to pool 2 when pool 1 stops and back when it returns, alerting both ways', async () => {
    // Each phase is observed over 200 answered requests (real traffic), not over a fixed time.
    const answeredSince = (at: number) =>
      waitFor(() => samples.filter((s) => s.startedAt >= at).length >= 200, 'traffic');
    await answeredSince(0);
    const stoppedAt = Date.now();
    const before = samples.filter((s) => s.endedAt < stoppedAt);
    expect(before.length).toBeGreaterThan(20);
    expect(before.every((s) => s.status === 200 && s.origin.startsWith('p1-'))).toBe(true);

    for (const origin of primary) await origin.stop();
    const [down] = await hooks.waitFor(1, poolEvent('Unhealthy'), 15_000);
    const switchedAt = down!.at;
    await answeredSince(switchedAt);

    const window = samples.filter((s) => s.startedAt >= stoppedAt && s.startedAt < switchedAt);
    const after = samples.filter((s) => s.startedAt >= switchedAt);
    expect(after.length).toBeGreaterThan(20);
    // After the switch: no failed request, all on pool 2.
    expect(after.filter((s) => s.status !== 200)).toEqual([]);
    expect(after.every((s) => s.origin.startsWith('p2-'))).toBe(true);
    // Before the checker noticed, the retry on another origin covered nearly every request.
    const windowFailures = window.filter((s) => s.status !== 200);
    expect(windowFailures.length).toBeLessThanOrEqual(Math.max(2, window.length * 0.05));

    // Pool 1's origins return once the connections that failed during the outage have aged out of passive
    // health (PASSIVE_FAILURE_MS after the last one, just before the switch): an origin that failed a
    // moment ago is passed over for that long even when its monitor says it is healthy again.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, switchedAt + PASSIVE_FAILURE_MS - Date.now())));
    for (const origin of primary) await origin.start();
    const [up] = await hooks.waitFor(1, poolEvent('Healthy'), 15_000);
    await answeredSince(up!.at);
    const back = samples.filter((s) => s.startedAt >= up!.at);
    expect(back.length).toBeGreaterThan(20);
    expect(back.filter((s) => s.status !== 200 || !s.origin.startsWith('p1-'))).toEqual([]);
    expect(samples.filter((s) => s.startedAt >= stoppedAt && s.status !== 200)).toEqual(windowFailures);

    console.log(
      `failover drill: ${samples.length} requests; pool 1 stopped -> Unhealthy alert after ${switchedAt - stoppedAt} ms ` +
        `(${window.length} requests in that window, ${windowFailures.length} failed); ` +
        `${after.length} after the switch, 0 failed; back on pool 1 after its Healthy alert`,
    );
  });
});
