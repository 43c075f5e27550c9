import { EGRESS_BINDING } from '../../isolate/contract.ts';
import type { PlatformBindingModule } from './contract.ts';

/**
 * The operator's egress lists, for the isolate's egress module to word the refusals workerd's `internet`
 * service makes (network-service.ts); none when egress is unrestricted.
 */
export const egress: PlatformBindingModule = ({ egressRules }) => ({
  bindings: egressRules ? [{ name: EGRESS_BINDING, json: JSON.stringify(egressRules) }] : [],
});
