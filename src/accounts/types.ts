import type { CallerToken } from '../shared/principal.ts';
export interface Account {
  id: string;
  name: string;
  type: string;
  created_on: string;
}

export interface User extends Partial<UserProfile> {
  id: string;
  email: string;
  created_on: string;
  modified_on: string;
}

/** The fields of Cloudflare's user object a user may edit (PATCH /user); null when never set. */
export interface UserProfile {
  first_name: string | null;
  last_name: string | null;
  telephone: string | null;
  country: string | null;
  zipcode: string | null;
}

export interface Membership {
  id: string;
  /** `type` too: the SDK's Membership.account is a full Account, whose `type` is required. */
  account: { id: string; name: string; type: string };
  user_id: string;
  roles: string[];
  status: string;
  created_on: string;
}

/** An API token's record: the same shape the request context carries for the caller's token. */
export type ApiToken = CallerToken;
