import { ApiClient } from '../../src/client/index.ts';
import type { AlertPolicy, PoolSummary } from '../../src/email-migration/index.ts';
import type { TestLedge } from '../helpers/ledge.ts';

export function clientFor(ledge: TestLedge): ApiClient {
  return new ApiClient({ apiUrl: ledge.apiUrl, auth: { token: ledge.apiToken } });
}

/** Creates pools through the real pools API, a few at a time. `emailOf(i)` gives each pool's legacy email. */
export async function createPools(
  ledge: TestLedge,
  count: number,
  emailOf: (i: number) => string,
  prefix = 'pool',
): Promise<string[]> {
  const api = clientFor(ledge);
  const ids: string[] = new Array(count);
  const indexes = Array.from({ length: count }, (_, i) => i);
  const worker = async () => {
    for (let i = indexes.shift(); i !== undefined; i = indexes.shift()) {
      const { result } = await api.request<{ id: string }>(
        'POST',
        `/accounts/${ledge.accountId}/load_balancers/pools`,
        {
          body: {
            name: `${prefix}-${String(i).padStart(5, '0')}`,
            origins: [{ name: 'origin-1', address: '192.0.2.10' }],
            notification_email: emailOf(i),
          },
        },
      );
      ids[i] = result.id;
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return ids;
}

export async function allPools(ledge: TestLedge): Promise<PoolSummary[]> {
  const pools: PoolSummary[] = [];
  for await (const pool of clientFor(ledge).paginate<PoolSummary>(
    `/accounts/${ledge.accountId}/load_balancers/pools`,
    {},
    1000,
  )) {
    pools.push(pool);
  }
  return pools;
}

export async function allPolicies(ledge: TestLedge): Promise<AlertPolicy[]> {
  return (await clientFor(ledge).request<AlertPolicy[]>('GET', `/accounts/${ledge.accountId}/alerting/v3/policies`))
    .result;
}
