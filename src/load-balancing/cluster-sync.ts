import type { Cluster } from '../cluster/index.ts';
import type { HealthChecker } from './health/checker.ts';
import type { ConfigChange, ConfigChangeBus } from './load-balancers/changes.ts';

const TOPIC = 'lb_config';
type SharedChange = Omit<ConfigChange, 'version'>;

/**
 * Makes every node see a load-balancing change made on any of them: each committed change of this node is
 * announced, and another node's is replayed on the local bus (so cached routes are dropped) and re-plans the
 * checker's jobs of a changed pool or monitor (a new pool is probed by its owner, wherever it was created).
 */
export function shareConfigChanges(
  cluster: Cluster,
  changes: ConfigChangeBus,
  checker: HealthChecker,
  onError: (error: unknown) => void,
): void {
  let replaying = false;
  changes.subscribe((change) => {
    if (replaying) return;
    const shared: SharedChange = {
      kind: change.kind,
      accountId: change.accountId,
      id: change.id,
      // A notice carries at most 8000 bytes; every listener drops all cached routes on any change anyway.
      hostnames: change.hostnames.length <= 20 ? change.hostnames : [],
    };
    cluster.announce(TOPIC, JSON.stringify(shared));
  });
  cluster.onRemote(TOPIC, (key) => {
    const change = parse(key);
    if (!change) return;
    replaying = true;
    try {
      changes.publish(change);
    } finally {
      replaying = false;
    }
    const replanned =
      change.kind === 'pool'
        ? checker.refreshPool(change.accountId, change.id)
        : change.kind === 'monitor'
          ? checker.refreshMonitor(change.accountId, change.id)
          : undefined;
    replanned?.catch((error: unknown) => onError(error));
  });
}

function parse(key: string): SharedChange | undefined {
  try {
    const value = JSON.parse(key) as Partial<SharedChange>;
    const kinds: readonly string[] = ['load_balancer', 'pool', 'monitor', 'zone'];
    if (typeof value.kind !== 'string' || !kinds.includes(value.kind)) return undefined;
    if (typeof value.accountId !== 'string' || typeof value.id !== 'string') return undefined;
    return {
      kind: value.kind as SharedChange['kind'],
      accountId: value.accountId,
      id: value.id,
      hostnames: Array.isArray(value.hostnames) ? value.hostnames.filter((h) => typeof h === 'string') : [],
    };
  } catch {
    return undefined;
  }
}
