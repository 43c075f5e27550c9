import { listBuckets, listPolicies, listScripts } from '../../../client/index.ts';
import { client, page } from '../api.ts';
import { replace } from '../dom.ts';
import { acct, state } from '../state.ts';
import { renderOverview } from './account.render.ts';

/** Overview: the account's counts, each loaded on its own (an area this token cannot read counts 0). */
export async function home(main: HTMLElement): Promise<void> {
  const [buckets, scripts, pools, policies] = await Promise.all([
    listBuckets(client, state.accountId).then(
      (r) => r.length,
      () => 0,
    ),
    listScripts(client, state.accountId).then(
      (r) => r.length,
      () => 0,
    ),
    page<unknown>(`${acct()}/load_balancers/pools`, 1, 5).then(
      (r) => r.totalCount,
      () => 0,
    ),
    listPolicies(client, state.accountId).then(
      (r) => r.length,
      () => 0,
    ),
  ]);
  replace(main, renderOverview({ buckets, scripts, pools, policies }));
}
