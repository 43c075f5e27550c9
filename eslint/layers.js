import { dirname, relative, resolve } from 'node:path';

/**
 * Which folders of src/ each folder may import: dependencies point one way, cli -> client and
 * api -> subsystems -> db/storage -> shared (docs/architecture.md, "Layers"). A layer is a folder, nothing finer:
 * were a folder split into two layers, each half could import the other's folder and the folders would import
 * each other while the table stayed acyclic. A subsystem reaches another only through its index.ts (its public
 * surface); the infrastructure layers (shared, db, api-kit) are imported file by file.
 */
const SUBSYSTEM_BASE = ['shared', 'db', 'cluster', 'api-kit'];
export const LAYERS = {
  shared: [],
  db: ['shared'],
  egress: ['shared'],
  // Engines: the parts products run on, below them and blind to them. The function runtime (workerd
  // processes, their configs and the modules that run inside them) serves the functions product.
  workerd: ['shared', 'egress'],
  // The HTTP proxy engine (pooled origin connections, the raw data plane) that load balancing routes through.
  proxy: ['shared', 'egress'],
  storage: ['shared', 'db'],
  // What subsystems write their routes with (body limits, the request context, envelopes, paging); api/
  // composes the app from the subsystems and this kit.
  'api-kit': ['shared', 'db'],
  // Nodes sharing one database: leases, heartbeats, the change feed.
  cluster: ['shared', 'db'],
  accounts: [...SUBSYSTEM_BASE],
  zones: [...SUBSYSTEM_BASE, 'accounts'],
  'load-balancing': [...SUBSYSTEM_BASE, 'accounts', 'egress', 'zones', 'proxy'],
  // Notifications consume load balancing's health events; load balancing never imports notifications.
  notifications: [...SUBSYSTEM_BASE, 'accounts', 'egress', 'load-balancing'],
  // The runtime (src/workerd/) gives bindings the R2 wire backend's workerd services.
  workers: [...SUBSYSTEM_BASE, 'accounts', 'egress', 'r2', 'storage', 'workerd'],
  // Workers routes and Custom Domains: URLs of an account's zones to its scripts (scripts reached by injection).
  'worker-routes': [...SUBSYSTEM_BASE, 'accounts', 'zones'],
  // D1 databases: records and the v4 API here, data in the accounts' engines (src/workerd/engine-host.ts).
  d1: [...SUBSYSTEM_BASE, 'accounts', 'workerd'],
  // Workers KV: namespaces as records, keys in the accounts' engines (src/workerd/engine-host.ts).
  kv: [...SUBSYSTEM_BASE, 'accounts', 'workerd'],
  // Queues: queues and consumers as records, messages in the accounts' queue engines (workerd's queues.js).
  queues: [...SUBSYSTEM_BASE, 'accounts', 'workerd'],
  // Workflows: records and the v4 API; instances in the engine beside the Worker that runs each (via the runtime).
  workflows: [...SUBSYSTEM_BASE, 'accounts'],
  // Temporary S3 credentials derive from API tokens; custom domains must be in a zone of the account.
  r2: [...SUBSYSTEM_BASE, 'storage', 'accounts', 'zones'],
  // The browser dashboard: sessions over the API's own authentication, live health events, and the
  // notification_email migration run through the client against /client/v4 in-process.
  dashboard: [...SUBSYSTEM_BASE, 'accounts', 'load-balancing', 'client', 'email-migration'],
  // The dashboard's browser code (bundled by src/dashboard/assets.ts): it reaches the server only through the
  // client the CLI uses, typed by the official SDK, and nothing on the server imports it.
  'dashboard-ui': ['client'],
  // The S3 API: access keys from accounts' tokens and r2's temporary credentials, objects and CORS from the
  // engine, bodies sent as the wire backend does.
  s3: [...SUBSYSTEM_BASE, 'accounts', 'storage', 'r2'],
  // HTTPS: certificates for zones' hostnames, served through the proxy engine's TLS termination.
  tls: [...SUBSYSTEM_BASE, 'accounts', 'zones', 'proxy'],
  api: [
    ...SUBSYSTEM_BASE,
    'accounts',
    'egress',
    'storage',
    'zones',
    'load-balancing',
    'notifications',
    'workers',
    'worker-routes',
    'r2',
  ],
  server: [
    'shared',
    'cluster',
    'db',
    'api-kit',
    'api',
    'accounts',
    'egress',
    'storage',
    'zones',
    'load-balancing',
    'notifications',
    'workers',
    'worker-routes',
    'r2',
    'dashboard',
    's3',
    'd1',
    'kv',
    'queues',
    'tls',
    'workflows',
    // The composition root starts the accounts' data engines (workerd's bundled engines), which several use.
    'workerd',
  ],
  client: ['shared'],
  // The legacy notification_email migration tool talks to an API (Ledge's or Cloudflare's) through the client.
  'email-migration': ['shared', 'client'],
  // `ledge server` and `ledge admin` run the composition root itself, through server/index.ts only.
  cli: ['shared', 'client', 'email-migration', 'server-entry'],
};

const INFRASTRUCTURE = new Set(['shared', 'db', 'api-kit']);
/**
 * What the CLI may load of the server: its entry, the signal handling `ledge server` installs before loading it,
 * and the settings schema its flags and `--help` are made from (without loading the server).
 */
const SERVER_ENTRIES = new Set(['server/index.ts', 'server/stop-request.ts', 'server/settings/index.ts']);
/** Names in the table that are a part of a folder: for cycles they are that folder. */
const FOLDER_OF = { 'server-entry': 'server' };

function layerOf(srcRelative) {
  const [folder, file] = srcRelative.split('/');
  if (folder === 'dashboard' && file === 'ui') return 'dashboard-ui';
  return folder;
}

/**
 * A cycle in a layer table, as the list of layers around it (first one repeated at the end), or null. With one
 * layer per folder and every import checked against an acyclic table, no two folders can import each other,
 * directly or round about.
 */
export function layerCycle(layers) {
  const state = new Map(); // layer -> 'open' while on the current path, 'done' once all it reaches is checked
  const path = [];
  const visit = (layer) => {
    if (state.get(layer) === 'done') return null;
    if (state.get(layer) === 'open') return [...path.slice(path.indexOf(layer)), layer];
    state.set(layer, 'open');
    path.push(layer);
    for (const next of layers[layer] ?? []) {
      const cycle = visit(FOLDER_OF[next] ?? next);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(layer, 'done');
    return null;
  };
  for (const layer of Object.keys(layers)) {
    const cycle = visit(layer);
    if (cycle) return cycle;
  }
  return null;
}

/** The rule over a layer table (the real one is LAYERS; tests pass their own). */
export function createLayersPlugin(layers) {
  const cycle = layerCycle(layers);
  return {
    rules: {
      layers: {
        meta: {
          type: 'problem',
          docs: { description: 'imports follow the layers of src/ (eslint/layers.js)' },
          schema: [],
        },
        create(context) {
          if (cycle) {
            return {
              Program: (node) =>
                context.report({ node, message: `eslint/layers.js has a cycle: ${cycle.join(' -> ')}` }),
            };
          }
          const srcRoot = resolve(context.cwd, 'src');
          const file = context.filename;
          const fromRelative = relative(srcRoot, file);
          if (fromRelative.startsWith('..')) return {};
          const from = layerOf(fromRelative);
          const check = (node, source) => {
            if (typeof source !== 'string' || !source.startsWith('.')) return;
            const targetRelative = relative(srcRoot, resolve(dirname(file), source));
            if (targetRelative.startsWith('..')) return;
            const to = layerOf(targetRelative);
            if (to === from) return;
            const allowed = layers[from];
            if (!allowed) {
              context.report({
                node,
                message: `src/${from}/ has no entry in eslint/layers.js: add its allowed imports`,
              });
              return;
            }
            const viaEntry = to === 'server' && SERVER_ENTRIES.has(targetRelative);
            if (!(allowed.includes(to) || (viaEntry && allowed.includes('server-entry')))) {
              context.report({
                node,
                message: `src/${from}/ may not import src/${targetRelative} (layers: eslint/layers.js)`,
              });
              return;
            }
            const [, ...rest] = targetRelative.split('/');
            // The composition root (server/) and the app (api/) wire subsystems from their parts.
            const composing = from === 'server' || from === 'api';
            if (!composing && !INFRASTRUCTURE.has(to) && to !== 'server' && rest.join('/') !== 'index.ts') {
              context.report({
                node,
                message: `import src/${to}/ through its index.ts, not src/${targetRelative}`,
              });
            }
          };
          return {
            ImportDeclaration: (node) => check(node.source, node.source.value),
            ExportNamedDeclaration: (node) => node.source && check(node.source, node.source.value),
            ExportAllDeclaration: (node) => check(node.source, node.source.value),
            ImportExpression: (node) => node.source.type === 'Literal' && check(node.source, node.source.value),
          };
        },
      },
    },
  };
}

export const layersPlugin = createLayersPlugin(LAYERS);
