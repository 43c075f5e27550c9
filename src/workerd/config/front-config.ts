import { ConfigFiles, type BuiltConfig } from './built.ts';
import type { FrontConfigInput } from './input.ts';
import { diskService } from './services.ts';
import { httpSocket, ROUTER_SERVICE, routerService } from './platform-services.ts';
import type { Service, Worker_Binding } from './types.ts';
import { WORKERD_V8_FLAGS } from './v8-flags.ts';

const ROUTES_SERVICE = 'ledge-routes';

/**
 * The config of the front processes: the entry router owns the functions socket and forwards each request
 * by Host to its script's backend process over a unix socket (an external service per slot). The routing
 * table is not in the config: the router re-reads `<routesDir>/routes.json` (a read-only disk service), so
 * a redeploy points a host at a new slot without restarting the front. A forward that fails, because the
 * backend was killed for exceeding a limit, is answered with Cloudflare's 1102.
 */
export function buildFrontConfig(input: FrontConfigInput): BuiltConfig {
  const files = new ConfigFiles();
  const slotBindings: Worker_Binding[] = [];
  const slots: Service[] = [];
  for (const slot of input.slots) {
    const service = `slot-${slot.index}`;
    slotBindings.push({ name: `S${slot.index}`, service });
    slots.push({ name: service, external: { address: slot.address, http: {} } });
  }
  const router = routerService(files, [
    { name: 'ROUTES', json: '{}' },
    { name: 'ROUTES_FILE', service: ROUTES_SERVICE },
    { name: 'DOMAIN', text: input.domain.toLowerCase() },
    { name: 'FRONT', json: 'true' },
    ...slotBindings,
  ]);
  return {
    config: {
      services: [router, ...slots, diskService(ROUTES_SERVICE, input.routesDir)],
      sockets: [httpSocket(ROUTER_SERVICE)],
      v8Flags: WORKERD_V8_FLAGS,
    },
    files: files.list(),
    directories: [],
  };
}
