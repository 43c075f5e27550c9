import { describeRefusal, type EgressPolicy } from '../egress/index.ts';
import { LbErrors } from './errors.ts';
import { probeTarget } from './health/targets.ts';
import type { Monitor } from './monitor-schemas.ts';
import type { Origin } from './pool-schemas.ts';

/**
 * Refuses (400/1002) a pool whose origins the egress policy would not let the health checker reach, so
 * the mistake shows when the pool, its monitor or a preview is written, not as a failing probe later.
 * With a monitor the port is the one probes use; without one, the origin's own port (or none). Every
 * origin counts, disabled ones too: enabling one later is a pool write that would not be checked again.
 */
export async function assertOriginsReachable(
  egress: EgressPolicy,
  origins: readonly Origin[],
  monitor: Monitor | undefined,
  context = '',
): Promise<void> {
  const refusals = await Promise.all(
    origins.map((origin) => {
      const port = monitor ? probeTarget(monitor, origin as Origin, '').port : (origin.port ?? 0);
      return egress.checkHost(origin.address, port);
    }),
  );
  const index = refusals.findIndex((refusal) => refusal !== undefined);
  const refusal = refusals[index];
  if (refusal) throw LbErrors.validation(`${context}origins[${index}].address: ${describeRefusal(refusal)}`);
}
