import type { TestLedge } from '../helpers/ledge.ts';

/** What the API helpers need: an in-process test server or a spawned one. */
export type LedgeTarget = Pick<TestLedge, 'apiUrl' | 'accountId' | 'tokenHeaders'>;

export interface V4Body {
  success: boolean;
  errors: { code: number; message: string }[];
  result: unknown;
  result_info?: Record<string, number>;
}

/** Calls the ledge API with the test token and returns status + parsed v4 body. */
export async function call(
  ledge: LedgeTarget,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: V4Body }> {
  const response = await fetch(`${ledge.apiUrl}${path}`, {
    method,
    headers: { ...ledge.tokenHeaders, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as V4Body };
}

export const alerting = (ledge: LedgeTarget) => `/accounts/${ledge.accountId}/alerting/v3`;

/** Creates a real pool through the load-balancing API; returns its id. */
export async function createPool(
  ledge: LedgeTarget,
  input: {
    name: string;
    origins?: { name: string; address: string; port?: number }[];
    notification_email?: string;
    monitor?: string;
    minimum_origins?: number;
  },
): Promise<string> {
  const { status, body } = await call(ledge, 'POST', `/accounts/${ledge.accountId}/load_balancers/pools`, {
    origins: [{ name: 'origin-1', address: '127.0.0.1' }],
    ...input,
  });
  if (status !== 200) throw new Error(`pool create failed: ${JSON.stringify(body.errors)}`);
  return (body.result as { id: string }).id;
}

/**
 * A webhook destination (named `r`) at `url` and an enabled policy of `alertType` that sends to it, with the
 * policy's `filters` as the API takes them; returns the policy's id.
 */
export async function webhookPolicy(
  ledge: LedgeTarget,
  url: string,
  policy: { name: string; alertType: string; filters?: Record<string, unknown> },
): Promise<string> {
  const hook = await call(ledge, 'POST', `${alerting(ledge)}/destinations/webhooks`, { name: 'r', url });
  if (hook.status !== 200) throw new Error(`webhook create failed: ${JSON.stringify(hook.body.errors)}`);
  const { status, body } = await call(ledge, 'POST', `${alerting(ledge)}/policies`, {
    name: policy.name,
    enabled: true,
    alert_type: policy.alertType,
    mechanisms: { webhooks: [{ id: (hook.body.result as { id: string }).id }] },
    ...(policy.filters ? { filters: policy.filters } : {}),
  });
  if (status !== 200) throw new Error(`policy create failed: ${JSON.stringify(body.errors)}`);
  return (body.result as { id: string }).id;
}
