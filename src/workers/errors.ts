import { clip, LedgeError } from '../shared/errors.ts';

/**
 * The v4 errors of the functions API. 10007 / 10090 are the codes wrangler branches on (script or
 * service missing -> create it); 10021 is Cloudflare's "the uploaded script is not valid" family.
 */
export const WorkerErrors = {
  scriptNotFound: () => new LedgeError(404, 10007, 'This Worker does not exist on your account.'),
  /** Cloudflare's "script still in use" (10064): delete with force=true to break the link. */
  scriptInUse: (name: string, producers: string[]) =>
    new LedgeError(
      409,
      10064,
      `The Worker ${clip(name)} is still in use as the tail Worker of ${producers.map((p) => clip(p)).join(', ')}: delete with force=true (wrangler delete --force, ledge delete --force) to delete it and remove it from them.`,
    ),
  /** Cloudflare's "script still in use" (10064) for a Worker others bind to as a service. */
  boundAsService: (name: string, callers: string[]) =>
    new LedgeError(
      409,
      10064,
      `The Worker ${clip(name)} is still in use: ${callers.map((c) => clip(c)).join(', ')} bind to it as a service. Delete with force=true (wrangler delete asks, then forces) to delete it anyway; their calls through the binding then fail.`,
    ),
  serviceNotFound: () => new LedgeError(404, 10090, 'workers.api.error.service_not_found'),
  versionNotFound: (id: string) => new LedgeError(404, 10217, `Version ${clip(id)} does not exist for this Worker.`),
  deploymentNotFound: (id: string) =>
    new LedgeError(404, 10218, `Deployment ${clip(id)} does not exist for this Worker.`),
  /** Cloudflare keeps the deployment that serves traffic: only older ones may be deleted. */
  activeDeployment: () =>
    new LedgeError(
      400,
      10219,
      'This deployment is the one serving traffic and cannot be deleted: deploy another version first, or delete the Worker.',
    ),
  /** wrangler recognises this code and points to `wrangler versions ...` (see secret/index.ts). */
  latestVersionNotDeployed: () =>
    new LedgeError(
      400,
      10214,
      'The latest version of this Worker is not deployed: deploy it first (or upload a new version), so that changing its settings does not deploy code you have not chosen to.',
    ),
  notDeployed: () =>
    new LedgeError(400, 10214, 'This Worker has no deployed version whose settings could be changed: deploy it first.'),
  secretNotFound: (name: string) => new LedgeError(404, 10056, `Secret ${clip(name)} does not exist on this Worker.`),
  subdomainNotFound: () => new LedgeError(404, 10007, 'This account has no workers.dev subdomain yet.'),
  invalidScriptName: (name: string) =>
    new LedgeError(
      400,
      10016,
      `Invalid Worker name "${clip(name)}": use 1-63 lowercase letters, digits and dashes, not starting or ending with a dash.`,
    ),
  malformedUpload: (detail: string) =>
    new LedgeError(400, 10026, `Could not parse the upload as multipart/form-data: ${detail}`),
  invalidScript: (message: string) => new LedgeError(400, 10021, message),
  /** Cloudflare's words for a d1 binding to a database the account does not have. */
  d1NotFound: (binding: string, id: string) =>
    new LedgeError(
      400,
      10181,
      `D1 binding '${clip(binding)}' references database '${clip(id)}' which was not found. Verify the database exists in your account and that the database_id in your configuration is correct.`,
    ),
  /** A queue binding to a queue the account does not have (Cloudflare's QueueNotFound). */
  queueNotFound: (binding: string, queue: string) =>
    new LedgeError(
      400,
      11000,
      `Queue binding '${clip(binding)}' references queue '${clip(queue)}', which does not exist: create it first (wrangler queues create ${clip(queue)}).`,
    ),
  /** A kv_namespace binding to a namespace the account does not have (Cloudflare's code and words). */
  kvNamespaceNotValid: (namespaceId: string) =>
    new LedgeError(400, 10041, `KV namespace '${clip(namespaceId)}' is not valid.`),
  /** Cloudflare's answer to a service binding whose target is not a Worker of the account. */
  serviceBindingTargetNotFound: (binding: string, target: string) =>
    new LedgeError(
      400,
      10143,
      `Could not resolve service binding '${clip(binding)}'. Target script '${clip(target)}' not found. Please verify the target script and try again.`,
    ),
  /** Cloudflare's "exceeded the size limit" code for script uploads. */
  uploadTooLarge: (limit: number) =>
    new LedgeError(
      413,
      10027,
      `The upload is larger than the limit of ${limit} bytes for a Worker's modules and metadata.`,
    ),
  invalidSecret: (message: string) => new LedgeError(400, 10021, message),
  invalidSubdomain: (name: string) =>
    new LedgeError(400, 10032, `Invalid subdomain "${clip(name)}": use 1-63 lowercase letters, digits and dashes.`),
  subdomainTaken: (name: string) => new LedgeError(409, 10036, `The subdomain "${clip(name)}" is already taken.`),
  invalidDeployment: (message: string) => new LedgeError(400, 10021, message),
  tailNotFound: () =>
    new LedgeError(404, 10007, 'This tail session does not exist (it ended, expired or belongs to another Worker).'),
  /** `wrangler dev --remote` asks for a preview session on the edge; Ledge runs deployed functions only. */
  remotePreviewUnsupported: () =>
    new LedgeError(
      501,
      10501,
      'Ledge does not offer remote previews (wrangler dev --remote). Deploy the Worker with `ledge deploy` (or `wrangler deploy`) and call it at the URL it prints, or run `wrangler dev` without --remote to develop locally.',
    ),
  /** A script did not start with a change: at the upload check, or in the runtime (a secret, a failure at random). */
  scriptFailedToStart: (script: string, detail: string, previousServes: boolean) =>
    new LedgeError(
      400,
      10021,
      `Worker "${clip(script)}" failed to start; ${
        previousServes
          ? 'nothing was changed: the previous deployment keeps serving.'
          : 'nothing was deployed (this Worker has no earlier deployment, so nothing serves it yet).'
      }\n${clip(detail, 2_000)}`,
    ),
  /** Cloudflare's workers.api.error.script_limit (10037, "ErrorWorkerLimit" in its API schema). */
  tooManyScripts: (limit: number) =>
    new LedgeError(
      400,
      10037,
      `You have exceeded the limit of ${limit} Workers on your account. Delete Workers you no longer use (wrangler delete) before you create another.`,
    ),
  runtimeUnavailable: (detail: string) =>
    new LedgeError(503, 10013, `The function runtime could not apply this change: ${detail}`),
} as const;
