import { z } from 'zod';

/** `PUT /accounts/{account_id}`: rename an account (settings are accepted and echoed, not interpreted). */
export const AccountUpdateSchema = z.strictObject({
  name: z.string().trim().min(1, 'name must not be empty').max(100, 'name must be at most 100 characters'),
  settings: z.record(z.string(), z.unknown()).optional(),
});
export type AccountUpdate = z.infer<typeof AccountUpdateSchema>;
