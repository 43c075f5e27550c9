import { z } from 'zod';

export const STEERING_POLICIES = [
  'off',
  'geo',
  'random',
  'dynamic_latency',
  'proximity',
  'least_outstanding_requests',
  'least_connections',
  '',
] as const;
export type SteeringPolicy = (typeof STEERING_POLICIES)[number];

/** The policies Ledge's traffic listener applies; the others are stored, and their traffic is answered 501. */
export const APPLIED_STEERING_POLICIES: readonly SteeringPolicy[] = [
  'off',
  '',
  'random',
  'least_outstanding_requests',
  'least_connections',
];

export const SESSION_AFFINITIES = ['none', 'cookie', 'ip_cookie', 'header'] as const;

/** Server-set fields a client may echo back from a GET; ignored, never stored from input. */
const readOnly = {
  id: z.string().optional(),
  created_on: z.string().optional(),
  modified_on: z.string().optional(),
  zone_name: z.string().optional(),
};

const poolId = z.string().min(1, 'a pool id is required').max(64);
const weight = z.number().min(0, 'weights are from 0 to 1').max(1, 'weights are from 0 to 1');
const poolMap = z.record(z.string().max(64), z.array(poolId));

const SessionAffinityAttributesSchema = z.strictObject({
  samesite: z.enum(['Auto', 'Lax', 'None', 'Strict']).default('Auto'),
  secure: z.enum(['Auto', 'Always', 'Never']).default('Auto'),
  drain_duration: z.number().int().min(0).max(86_400).default(0),
  headers: z.array(z.string().min(1).max(100)).max(10).optional(),
  require_all_headers: z.boolean().default(false),
  zero_downtime_failover: z.enum(['none', 'temporary', 'sticky']).default('none'),
});

/** Body of POST and PUT (PATCH merges onto the stored load balancer first, then validates the same way). */
export const LoadBalancerInputSchema = z
  .strictObject({
    ...readOnly,
    name: z.string({ error: 'name (the hostname) is required' }).min(1, 'name (the hostname) is required'),
    description: z.string().max(1024).default(''),
    default_pools: z
      .array(poolId, { error: 'default_pools (pool ids in failover order) is required' })
      .min(1, 'a load balancer needs at least one pool')
      .max(64),
    fallback_pool: z
      .string({ error: 'fallback_pool (a pool id) is required' })
      .min(1, 'fallback_pool is required')
      .max(64),
    enabled: z.boolean().default(true),
    proxied: z.boolean().default(false),
    ttl: z.number().int().min(1).max(86_400).default(30),
    steering_policy: z.enum(STEERING_POLICIES).default('off'),
    random_steering: z
      .strictObject({
        default_weight: weight.default(1),
        pool_weights: z.record(poolId, weight).default({}),
      })
      .optional(),
    session_affinity: z.enum(SESSION_AFFINITIES).default('none'),
    session_affinity_ttl: z.number().int().min(1).max(604_800).optional(),
    session_affinity_attributes: SessionAffinityAttributesSchema.optional(),
    adaptive_routing: z.strictObject({ failover_across_pools: z.boolean().default(false) }).optional(),
    location_strategy: z
      .strictObject({
        mode: z.enum(['pop', 'resolver_ip']).default('pop'),
        prefer_ecs: z.enum(['always', 'never', 'proximity', 'geo']).default('proximity'),
      })
      .optional(),
    region_pools: poolMap.optional(),
    pop_pools: poolMap.optional(),
    country_pools: poolMap.optional(),
    // Stored and answered as given; Ledge's traffic listener does not evaluate rules.
    rules: z
      .array(z.looseObject({ name: z.string().optional(), condition: z.string().optional() }))
      .max(100)
      .optional(),
    networks: z.array(z.string().max(64)).max(10).optional(),
  })
  .superRefine((lb, ctx) => {
    const seen = new Set<string>();
    lb.default_pools.forEach((id, index) => {
      if (seen.has(id))
        ctx.addIssue({ code: 'custom', path: ['default_pools', index], message: `pool ${id} is listed twice` });
      seen.add(id);
    });
    for (const id of Object.keys(lb.random_steering?.pool_weights ?? {})) {
      if (!seen.has(id))
        ctx.addIssue({
          code: 'custom',
          path: ['random_steering', 'pool_weights', id],
          message: 'weights are for pools in default_pools',
        });
    }
    const ttl = lb.session_affinity_ttl;
    if (ttl !== undefined && lb.session_affinity === 'header' && (ttl < 30 || ttl > 3600))
      ctx.addIssue({
        code: 'custom',
        path: ['session_affinity_ttl'],
        message: 'with header affinity the ttl is from 30 to 3600 seconds',
      });
    if (ttl !== undefined && (lb.session_affinity === 'cookie' || lb.session_affinity === 'ip_cookie') && ttl < 1800)
      ctx.addIssue({
        code: 'custom',
        path: ['session_affinity_ttl'],
        message: 'with cookie affinity the ttl is from 1800 to 604800 seconds',
      });
    if (lb.session_affinity === 'header' && (lb.session_affinity_attributes?.headers ?? []).length === 0)
      ctx.addIssue({
        code: 'custom',
        path: ['session_affinity_attributes', 'headers'],
        message: 'header affinity needs at least one header name',
      });
  });

export type LoadBalancerInput = z.infer<typeof LoadBalancerInputSchema>;

/** A load balancer as stored and as the API renders it (the SDK's `LoadBalancer`). */
export interface LoadBalancer {
  id: string;
  created_on: string;
  modified_on: string;
  zone_name: string;
  name: string;
  description: string;
  default_pools: string[];
  fallback_pool: string;
  enabled: boolean;
  proxied: boolean;
  ttl: number;
  steering_policy: SteeringPolicy;
  random_steering?: { default_weight: number; pool_weights: Record<string, number> };
  session_affinity: (typeof SESSION_AFFINITIES)[number];
  session_affinity_ttl?: number;
  session_affinity_attributes?: z.infer<typeof SessionAffinityAttributesSchema>;
  adaptive_routing?: { failover_across_pools: boolean };
  location_strategy?: { mode: 'pop' | 'resolver_ip'; prefer_ecs: 'always' | 'never' | 'proximity' | 'geo' };
  region_pools?: Record<string, string[]>;
  pop_pools?: Record<string, string[]>;
  country_pools?: Record<string, string[]>;
  rules?: Record<string, unknown>[];
  networks?: string[];
}

/** Every pool id a load balancer refers to (for existence checks and pool references). */
export function referencedPoolIds(
  lb: Pick<LoadBalancer, 'default_pools' | 'fallback_pool' | 'region_pools' | 'pop_pools' | 'country_pools'>,
): string[] {
  const ids = new Set<string>([...lb.default_pools, lb.fallback_pool]);
  for (const map of [lb.region_pools, lb.pop_pools, lb.country_pools])
    for (const list of Object.values(map ?? {})) for (const id of list) ids.add(id);
  return [...ids];
}
