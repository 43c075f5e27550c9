/** Second path segment under /accounts/{id}/ -> the subsystem that serves it. */
const ACCOUNT_GROUPS: Record<string, string> = {
  load_balancers: 'load_balancing',
  workers: 'workers',
  r2: 'r2',
  storage: 'kv',
  alerting: 'notifications',
};

/**
 * The route group of an API path (relative to /client/v4): a subsystem name from a fixed set, so a
 * metric labelled with it has a bounded number of series whatever paths clients send.
 */
export function routeGroup(path: string): string {
  const parts = path.split('/').filter(Boolean);
  if (parts[0] === 'user' || parts[0] === 'memberships') return 'accounts';
  if (parts[0] !== 'accounts') return 'other';
  if (parts.length <= 2) return 'accounts';
  return ACCOUNT_GROUPS[parts[2]!] ?? (parts[2] === 'members' || parts[2] === 'tokens' ? 'accounts' : 'other');
}
