import type { Route } from '../router.ts';
import { bucketSettings, buckets, objects } from './r2.ts';
import { editPool, loadBalancers, loadBalancingHome, managePools, manageMonitors } from './lb.ts';
import { destinations, history, migration, policies, policyForm } from './notifications.ts';
import { scriptDetail, scripts } from './workers.ts';
import { zones } from './account.ts';
import { zoneSsl } from './ssl.ts';
import { members, tokens } from './access.ts';
import { home } from './home.ts';
import { database, databases } from './d1.ts';
import { queues } from './queues.ts';
import { instance, workflow, workflows } from './workflows.ts';
import { namespace as objectNamespace, namespaces as objectNamespaces } from './durable-objects.ts';
import { keys, namespaces as kvNamespaces, value } from './kv.ts';

type View = (main: HTMLElement) => Promise<void>;

/** The view a URL names. */
export function routeView({ path, query }: Route): View {
  const [area, a, b, c] = path;
  switch (area) {
    case 'r2':
      if (!a) return buckets;
      return b === 'settings' ? (main) => bucketSettings(main, a) : (main) => objects(main, a, query);
    case 'lb':
      if (a === 'pools' && b && c === 'charts') {
        const range = query.get('range');
        const chosen = range === 'day' || range === 'week' ? range : 'hour';
        return (main) => import('./charts.ts').then((charts) => charts.poolCharts(main, b, chosen));
      }
      if (a === 'pools' && b) return (main) => editPool(main, b);
      if (a === 'pools') return (main) => managePools(main);
      if (a === 'monitors') return manageMonitors;
      if (a === 'balancers') return loadBalancers;
      return loadBalancingHome;
    case 'notifications':
      if (a === 'new') return (main) => policyForm(main, query);
      if (a === 'policies' && b) return (main) => policyForm(main, query, b);
      if (a === 'destinations') return destinations;
      if (a === 'history') return (main) => history(main);
      if (a === 'migration') return (main) => migration(main);
      return policies;
    case 'workers':
      return a ? (main) => scriptDetail(main, a) : scripts;
    case 'd1':
      return a ? (main) => database(main, a) : databases;
    case 'queues':
      return queues;
    case 'workflows':
      if (a && b) return (main) => instance(main, a, b);
      return a ? (main) => workflow(main, a) : workflows;
    case 'durable-objects':
      return a ? (main) => objectNamespace(main, a, query) : objectNamespaces;
    case 'kv':
      if (a && b === 'key' && c !== undefined) return (main) => value(main, a, c);
      return a ? (main) => keys(main, a, query) : (main) => kvNamespaces(main);
    case 'zones':
      if (a && b === 'ssl') return (main) => zoneSsl(main, a);
      return (main) => zones(main);
    case 'members':
      return members;
    case 'tokens':
      return tokens;
    default:
      return home;
  }
}
