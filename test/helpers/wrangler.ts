import { join } from 'node:path';
import { cleanEnv, REPO_ROOT, tempDir, type CliResult } from './ledge.ts';
import { runAs } from './user-shell.ts';

export const WRANGLER_ENTRY = join(REPO_ROOT, 'node_modules/wrangler/bin/wrangler.js');
/** wrangler 3 (the npm alias `wrangler3`), which users still deploy with. */
export const WRANGLER3_ENTRY = join(REPO_ROOT, 'node_modules/wrangler3/bin/wrangler.js');

/**
 * Runs the real `wrangler` CLI (from npm) with the pinned Node against a Ledge API: no metrics, no
 * update check, a throwaway HOME so no developer login leaks in.
 */
export function runWrangler(
  args: string[],
  options: {
    apiUrl: string;
    env?: NodeJS.ProcessEnv;
    cwd?: string;
    input?: string;
    timeoutMs?: number;
    /** Which wrangler: WRANGLER_ENTRY (4, the default) or WRANGLER3_ENTRY. */
    entry?: string;
  },
): Promise<CliResult> {
  const home = tempDir('wrangler-home-');
  return runAs(process.execPath, [options.entry ?? WRANGLER_ENTRY, ...args], {
    cwd: options.cwd ?? tempDir('wrangler-cwd-'),
    env: {
      ...cleanEnv(),
      HOME: home,
      XDG_CONFIG_HOME: join(home, '.config'),
      CLOUDFLARE_API_BASE_URL: options.apiUrl,
      WRANGLER_SEND_METRICS: 'false',
      WRANGLER_HIDE_BANNER: 'true',
      NO_COLOR: '1',
      CI: 'true',
      ...options.env,
    },
    input: options.input,
    timeoutMs: options.timeoutMs,
  });
}
