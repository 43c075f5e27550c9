import { METRICS_SECRET_BINDING } from '../../isolate/contract.ts';
import type { PlatformBindingModule } from './contract.ts';

/** The secret the ping service asks the isolate for its counts with; kept from user code by the modules that take it. */
export const metricsSecret: PlatformBindingModule = (context) => ({
  bindings: [{ name: METRICS_SECRET_BINDING, text: context.metricsSecret }],
});
