import { z } from 'zod';
import { invalidEmails, isOriginAddress, POOL_NAME } from './validation.ts';

export const CHECK_REGIONS = [
  'WNAM',
  'ENAM',
  'WEU',
  'EEU',
  'NSAM',
  'SSAM',
  'OC',
  'ME',
  'NAF',
  'SAF',
  'SAS',
  'SEAS',
  'NEAS',
  'CHINA',
  'ALL_REGIONS',
] as const;

/** Server-set fields a client may echo back from a GET (round-trips); they are ignored, never stored from input. */
const readOnly = {
  id: z.string().optional(),
  created_on: z.string().optional(),
  modified_on: z.string().optional(),
  disabled_at: z.string().optional(),
};

const OriginHeaderSchema = z.strictObject({
  Host: z.array(z.string().min(1).max(255)).length(1, 'exactly one Host value is allowed'),
});

export const OriginInputSchema = z.strictObject({
  name: z.string().min(1, 'an origin needs a name').max(255),
  address: z.string().refine(isOriginAddress, 'must be an IPv4 or IPv6 address or a hostname'),
  enabled: z.boolean().default(true),
  weight: z.number().min(0, 'weight must be from 0 to 1').max(1, 'weight must be from 0 to 1').default(1),
  header: OriginHeaderSchema.optional(),
  port: z.number().int().min(0).max(65535).default(0),
  virtual_network_id: z.string().max(64).optional(),
  flatten_cname: z.boolean().optional(),
  disabled_at: readOnly.disabled_at,
});

const FilterOptionsSchema = z.strictObject({
  disable: z.boolean().nullable().optional(),
  healthy: z.boolean().nullable().optional(),
});

const LoadSheddingSchema = z.strictObject({
  default_percent: z.number().min(0).max(100).default(0),
  default_policy: z.enum(['random', 'hash']).default('random'),
  session_percent: z.number().min(0).max(100).default(0),
  session_policy: z.enum(['hash']).default('hash'),
});

/** Body of POST and PUT (PATCH merges onto the stored pool first, then validates the same way). */
export const PoolInputSchema = z
  .strictObject({
    ...readOnly,
    name: z
      .string()
      .min(1, 'a pool needs a name')
      .max(255)
      .regex(POOL_NAME, 'only letters, digits, "-" and "_" are allowed'),
    description: z.string().max(1024).default(''),
    enabled: z.boolean().default(true),
    minimum_origins: z.number().int().min(1).default(1),
    monitor: z.string().nullable().optional(),
    monitor_group: z.string().optional(),
    origins: z.array(OriginInputSchema).min(1, 'a pool needs at least one origin'),
    notification_email: z
      .string()
      .default('')
      .refine((v) => v === '' || invalidEmails(v).length === 0, 'must be "" or comma-separated email addresses'),
    notification_filter: z
      .strictObject({
        origin: FilterOptionsSchema.nullable().optional(),
        pool: FilterOptionsSchema.nullable().optional(),
      })
      .nullable()
      .default(null),
    check_regions: z.array(z.enum(CHECK_REGIONS)).nullable().default(null),
    latitude: z.number().min(-90).max(90).optional(),
    longitude: z.number().min(-180).max(180).optional(),
    load_shedding: LoadSheddingSchema.nullable().default(null),
    origin_steering: z
      .strictObject({
        policy: z.enum(['random', 'hash', 'least_outstanding_requests', 'least_connections']).default('random'),
      })
      .nullable()
      .default(null),
    networks: z.array(z.string()).optional(),
    health_sources: z
      .array(z.enum(['local', 'regional', 'global']))
      .nullable()
      .optional(),
  })
  .superRefine((pool, ctx) => {
    if ((pool.latitude === undefined) !== (pool.longitude === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['latitude'], message: 'latitude and longitude must be given together' });
    }
    const names = new Set<string>();
    pool.origins.forEach((origin, index) => {
      if (names.has(origin.name)) {
        ctx.addIssue({
          code: 'custom',
          path: ['origins', index, 'name'],
          message: `duplicate origin name "${origin.name}"`,
        });
      }
      names.add(origin.name);
    });
    if (pool.minimum_origins > pool.origins.length) {
      ctx.addIssue({ code: 'custom', path: ['minimum_origins'], message: 'cannot exceed the number of origins' });
    }
  });

export type PoolInput = z.infer<typeof PoolInputSchema>;
export type OriginInput = z.infer<typeof OriginInputSchema>;

/** The only body bulk PATCH accepts: `notification_email` ("" clears; a valid list is applied, deprecated). */
export const BulkPatchSchema = z.strictObject({
  notification_email: z
    .string()
    .refine((v) => v === '' || invalidEmails(v).length === 0, 'must be "" or comma-separated email addresses'),
});

export interface Origin {
  name: string;
  address: string;
  enabled: boolean;
  weight: number;
  port: number;
  header?: { Host: string[] };
  virtual_network_id?: string;
  flatten_cname?: boolean;
  disabled_at?: string;
}

/** A pool as stored and as the API renders it. */
export interface Pool {
  id: string;
  created_on: string;
  modified_on: string;
  name: string;
  description: string;
  enabled: boolean;
  minimum_origins: number;
  monitor?: string;
  monitor_group?: string;
  origins: Origin[];
  notification_email: string;
  notification_filter: PoolInput['notification_filter'];
  check_regions: PoolInput['check_regions'];
  latitude?: number;
  longitude?: number;
  load_shedding: PoolInput['load_shedding'];
  origin_steering: PoolInput['origin_steering'];
  networks?: string[];
  health_sources?: PoolInput['health_sources'];
  disabled_at?: string;
}
