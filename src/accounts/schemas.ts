import { z } from 'zod';

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
