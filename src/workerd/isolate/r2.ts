import { env as platformEnv } from 'cloudflare:workers';
import { localBodies } from './local-body.js';
import { CACHE_KEY, LOCAL_BODY_KEY, LOCAL_BUCKETS, SLOT_BUCKETS } from './params.js';

/**
 * The script's local body reads (local-body.ts), set up when the module loads: before any user module, the
 * hidden bindings leave the module env.
 */
export const withLocalBodies = localBodies(platformEnv, LOCAL_BODY_KEY, LOCAL_BUCKETS, CACHE_KEY, SLOT_BUCKETS);
