/**
 * One server-sent event stream per tab (/dashboard/events): health transitions of the account's pools and
 * origins, as soon as they commit. Views listen while their element is on the page.
 */
export interface HealthChange {
  account_id: string;
  pool_id: string;
  pool_name: string;
  event_source: 'pool' | 'origin';
  origin_name: string | null;
  new_health: 'Healthy' | 'Unhealthy';
  reason: string;
  occurred_at: string;
}

const listeners = new Set<{ owner: Element; callback: (change: HealthChange) => void }>();
let source: EventSource | undefined;

export function startLive(): void {
  if (source) return;
  source = new EventSource('/dashboard/events');
  source.addEventListener('health', (event) => {
    const change = JSON.parse((event as MessageEvent<string>).data) as HealthChange;
    for (const listener of listeners) {
      if (!listener.owner.isConnected) listeners.delete(listener);
      else listener.callback(change);
    }
  });
}

/** Calls `callback` on each health change while `owner` is in the document. */
export function onHealth(owner: Element, callback: (change: HealthChange) => void): void {
  listeners.add({ owner, callback });
}
