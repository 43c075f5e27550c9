/** One entry of `/pools/{id}/references` and `/monitors/{id}/references` (Cloudflare's shape). */
export interface Reference {
  /** `referral`: this resource refers to it; `referrer`: it refers to this resource. */
  reference_type: 'referral' | 'referrer';
  resource_id: string;
  resource_name: string;
  resource_type: string;
}

/**
 * Reports what refers to a pool from outside load-balancing (e.g. notification policies filtering on
 * the pool). The platform registers sources; load-balancing imports none of those subsystems.
 */
export type ReferenceSource = (accountId: string, poolId: string) => Promise<Reference[]> | Reference[];
