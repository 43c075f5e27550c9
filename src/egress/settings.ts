import { parseCidrList } from './addresses.ts';
import type { EgressSettings } from './policy.ts';

/**
 * The operator's egress lists: `--egress-allow` / `--egress-deny` (comma-separated CIDRs), else
 * LEDGE_EGRESS_ALLOW / LEDGE_EGRESS_DENY. A bad entry is an error at start, naming the setting.
 */
export function resolveEgressSettings(
  flags: { allow?: string | undefined; deny?: string | undefined },
  env: NodeJS.ProcessEnv,
): EgressSettings {
  return {
    allow: parseSetting(
      flags.allow !== undefined ? '--egress-allow' : 'LEDGE_EGRESS_ALLOW',
      flags.allow ?? env['LEDGE_EGRESS_ALLOW'],
    ),
    deny: parseSetting(
      flags.deny !== undefined ? '--egress-deny' : 'LEDGE_EGRESS_DENY',
      flags.deny ?? env['LEDGE_EGRESS_DENY'],
    ),
  };
}

function parseSetting(name: string, raw: string | undefined): EgressSettings['allow'] {
  try {
    return parseCidrList(raw);
  } catch (error) {
    throw new Error(`${name}: ${(error as Error).message}`, { cause: error });
  }
}
