import { LedgeError } from '../shared/errors.ts';

/** Authentication and account-access failures, with the codes Cloudflare's API uses. */
export const AuthErrors = {
  missingHeaders: () => new LedgeError(400, 9106, 'Missing X-Auth-Key, X-Auth-Email or Authorization headers'),
  invalidHeaders: (chainCode: 6102 | 6103 | 6111) =>
    new LedgeError(400, 6003, 'Invalid request headers', {
      chain: [{ code: chainCode, message: CHAIN_MESSAGES[chainCode] }],
    }),
  unknownKey: () => new LedgeError(403, 9103, 'Unknown X-Auth-Key or X-Auth-Email'),
  invalidToken: () => new LedgeError(401, 1000, 'Invalid API Token'),
  notAToken: () => new LedgeError(400, 1001, 'This endpoint verifies API tokens; the request did not use one'),
  /** The same answer for an account that does not exist and one the caller is not a member of. */
  accountForbidden: () => new LedgeError(403, 9109, 'Unauthorized to access requested resource'),
  /** The same answer for a membership that does not exist and one of another user. */
  membershipNotFound: () => new LedgeError(404, 1003, 'Membership not found'),
  membershipAlreadyAccepted: () =>
    new LedgeError(
      400,
      1001,
      'This membership is already accepted, so there is no invitation to reject: to leave the account, DELETE /memberships/{membership_id}.',
    ),
  membershipRejected: () =>
    new LedgeError(400, 1001, 'This invitation was rejected; ask an administrator of the account for a new one.'),
  lastAdministrator: (account: string) =>
    new LedgeError(
      409,
      1002,
      `You are the last administrator of the account "${account}": it would be left without anyone to run it. Add another administrator first.`,
    ),
  lastSuperAdministrator: (account: string) =>
    new LedgeError(
      409,
      1002,
      `This is the last Super Administrator of the account "${account}": it cannot be removed or demoted. Make another member Super Administrator first.`,
    ),
  notAdministrator: () => new LedgeError(403, 9109, 'Only an Administrator of the account may do this'),
  /** Cloudflare's answer to a token used from outside its condition.request_ip. */
  ipNotAllowed: (ip: string | undefined) =>
    new LedgeError(403, 9109, `Cannot use the access token from location: ${ip ?? 'unknown'}`),
  readOnly: () => new LedgeError(403, 10000, 'Authentication error'),
} as const;

const CHAIN_MESSAGES = {
  6102: 'Invalid format for X-Auth-Email header',
  6103: 'Invalid format for X-Auth-Key header',
  6111: 'Invalid format for Authorization header',
} as const;
