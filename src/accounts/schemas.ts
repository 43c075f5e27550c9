import { z } from 'zod';
import { parseCidr } from '../shared/request-ip.ts';

/** `PUT /accounts/{account_id}`: rename an account (settings are accepted and echoed, not interpreted). */
export const AccountUpdateSchema = z.strictObject({
  name: z.string().trim().min(1, 'name must not be empty').max(100, 'name must be at most 100 characters'),
  settings: z.record(z.string(), z.unknown()).optional(),
});
export type AccountUpdate = z.infer<typeof AccountUpdateSchema>;

const profileField = (name: string, max: number) =>
  z.string().trim().max(max, `${name} must be at most ${max} characters`).nullable().optional();

/** `PATCH /user`: the editable fields of Cloudflare's user object, with its documented lengths. */
export const UserEditSchema = z.strictObject({
  first_name: profileField('first_name', 60),
  last_name: profileField('last_name', 60),
  telephone: profileField('telephone', 20),
  country: profileField('country', 30),
  zipcode: profileField('zipcode', 20),
});
export type UserEdit = z.infer<typeof UserEditSchema>;

/** `PUT /memberships/{id}`: accept or reject an invitation. */
export const MembershipUpdateSchema = z.strictObject({
  status: z.enum(['accepted', 'rejected'], { error: 'status must be "accepted" or "rejected"' }),
});

const isoDate = (name: string) =>
  z
    .string()
    .refine((value) => !Number.isNaN(Date.parse(value)), `${name} must be a date and time (ISO 8601)`)
    .transform((value) => new Date(value).toISOString());

const cidrList = (name: string) =>
  z
    .array(
      z.string().refine((value) => parseCidr(value) !== undefined, `${name}: each entry must be an IPv4 or IPv6 CIDR`),
    )
    .max(100, `${name}: at most 100 ranges`)
    .optional();

/** A token's `condition`: Cloudflare's request_ip in / not_in lists (anything else is refused, not dropped). */
export const TokenConditionSchema = z.strictObject({
  request_ip: z
    .strictObject({
      in: cidrList('condition.request_ip.in'),
      not_in: cidrList('condition.request_ip.not_in'),
    })
    .optional(),
});

/** `POST /user/tokens`: Cloudflare's shape; what Ledge can express is checked in management.ts. */
export const TokenCreateSchema = z.strictObject({
  name: z.string().trim().min(1, 'name must not be empty').max(120, 'name must be at most 120 characters'),
  policies: z
    .array(
      z.object({
        effect: z.enum(['allow', 'deny']),
        permission_groups: z.array(z.object({ id: z.string() })),
        resources: z.record(z.string(), z.unknown()),
      }),
    )
    .min(1, 'give one policy'),
  not_before: isoDate('not_before').optional(),
  expires_on: isoDate('expires_on').optional(),
  condition: TokenConditionSchema.optional(),
});
export type TokenCreate = z.infer<typeof TokenCreateSchema>;

const roles = z.array(z.string().min(1)).min(1, 'give at least one role');

/** `POST /accounts/{id}/members`: an e-mail and role ids (or names); always an invitation (`accepted` is refused). */
export const MemberCreateSchema = z.strictObject({
  email: z.string().trim().min(1, 'email must not be empty'),
  roles,
  status: z.enum(['accepted', 'pending']).optional(),
});

/** `PUT /accounts/{id}/members/{member_id}`: the member's roles, as `{id}` objects (the SDK's) or ids. */
export const MemberUpdateSchema = z.object({
  roles: z
    .array(z.union([z.string().min(1), z.object({ id: z.string().min(1) }).transform((role) => role.id)]))
    .min(1, 'give at least one role'),
});
