import { clip, LedgeError } from '../shared/errors.ts';

/** v4 codes of Cloudflare's Queues API (as its API answers them and clients match them by number). */
export const QUEUES_VALIDATION_CODE = 10026;

export const QueueErrors = {
  validation: (detail: string) => new LedgeError(400, QUEUES_VALIDATION_CODE, detail),
  /** The same answer for a queue that does not exist and one of another account. */
  notFound: (idOrName: string) => new LedgeError(404, 11000, `Queue does not exist: ${clip(idOrName)}`),
  invalidName: (name: string) =>
    new LedgeError(
      400,
      11003,
      `Invalid queue name "${clip(name)}": use 1 to 63 lowercase letters, digits and "-", starting and ending with a letter or digit.`,
    ),
  duplicateName: (name: string) => new LedgeError(409, 11009, `A queue with name "${clip(name)}" already exists.`),
  tooMany: (max: number) =>
    new LedgeError(400, 11010, `You have reached the maximum number of queues (${max}) for this account.`),
  consumerExists: (queue: string) =>
    new LedgeError(409, 11004, `Queue "${clip(queue)}" already has a consumer: remove it first.`),
  consumerNotFound: (id: string) => new LedgeError(404, 11006, `Consumer does not exist: ${clip(id)}`),
  workerNotFound: (script: string) =>
    new LedgeError(404, 10007, `Worker "${clip(script)}" does not exist in this account: deploy it first.`),
  inUse: (queue: string, scripts: string[]) =>
    new LedgeError(
      409,
      11005,
      `Queue "${clip(queue)}" is still bound as a producer by ${scripts.map((s) => `"${clip(s)}"`).join(', ')}: remove the binding first.`,
    ),
  httpPullUnsupported: () =>
    new LedgeError(400, QUEUES_VALIDATION_CODE, 'http_pull consumers are not available here: use a worker consumer.'),
  /** The account's queue engine could not be reached (starting, or restarted after a crash). */
  unavailable: (detail: string) => new LedgeError(503, 11000, `Queues are unavailable: ${detail}`),
} as const;
