import { clip, LedgeError } from '../shared/errors.ts';

/** v4 codes of the load-balancing API: validation 1002, duplicate 1003, still referenced 1005. */
export const LB_VALIDATION_CODE = 1002;

export const LbErrors = {
  /** Every client mistake in a body or query: "<detail>: validation failed". */
  validation: (detail: string) => new LedgeError(400, LB_VALIDATION_CODE, `${detail}: validation failed`),
  duplicatePoolName: (name: string) =>
    new LedgeError(400, 1003, `A pool named "${clip(name)}" already exists in this account`),
  poolNotFound: (id: string) => new LedgeError(404, 1001, `Pool ${clip(id)} not found`),
  monitorNotFound: (id: string) => new LedgeError(404, 1001, `Monitor ${clip(id)} not found`),
  loadBalancerNotFound: (id: string) => new LedgeError(404, 1001, `Load balancer ${clip(id)} not found`),
  duplicateLoadBalancerName: (name: string) =>
    new LedgeError(400, 1003, `A load balancer with the hostname "${clip(name)}" already exists`),
  previewNotFound: (id: string) => new LedgeError(404, 1001, `Preview ${clip(id)} not found`),
  stillReferenced: (what: string, referrers: string) =>
    new LedgeError(412, 1005, `${what} is still referenced by ${referrers}; remove those references first`),
} as const;
