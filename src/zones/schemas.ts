import { z } from 'zod';
export { normaliseHostname } from '../shared/hostname.ts';

export const ZONE_TYPES = ['full', 'partial', 'secondary', 'internal'] as const;
export const ZONE_STATUSES = ['initializing', 'pending', 'active', 'moved'] as const;

/** Body of POST /zones (the SDK's ZoneCreateParams). The name is checked by `checkZoneName`. */
export const ZoneCreateSchema = z.strictObject({
  name: z.string({ error: 'name is required and must be a string' }),
  account: z.strictObject({ id: z.string({ error: 'account.id is required' }).min(1, 'account.id is required') }),
  // Only "full" exists here: there is no DNS to delegate partially (CNAME setup) or to transfer in.
  type: z.enum(['full'], { error: 'only "full" zones are supported' }).default('full'),
  jump_start: z.boolean().optional(),
});

/** A zone as stored. */
export interface Zone {
  id: string;
  account_id: string;
  name: string;
  status: (typeof ZONE_STATUSES)[number];
  type: (typeof ZONE_TYPES)[number];
  created_on: string;
  modified_on: string;
}
