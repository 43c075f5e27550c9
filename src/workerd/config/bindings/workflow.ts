import { dirname, join } from 'node:path';
import { hostedWorkflows, type Binding, type ScriptToRun } from '../../script.ts';
import { SERVICE_RPC_HOST, workflowEntrypoint } from '../../service-sockets.ts';
import { WORKFLOWS_ENGINE_MODULE } from '../workflows/engine-module.ts';
import type { Service, Worker_Binding } from '../types.ts';
import type { BindingModule, PlatformBindingModule } from './contract.ts';

/** The bundled engines need RPC; the date of the engine's own worker, not the user's. */
const ENGINE_COMPATIBILITY_DATE = '2025-01-01';

/** The service that runs a script's Workflows (workerd's bundled workflows.js), in that script's process. */
export const workflowsEngineName = (deployed: ScriptToRun): string =>
  `workflows:${deployed.script.account_id}/${deployed.script.name}`;

/** workerd names each Workflow's instances' namespace so (workflows.js header: `miniflare-workflows-<name>`). */
const namespaceClass = (workflow: string): string => `miniflare-workflows-${workflow}`;

/** The engine's binding service for one Workflow: WorkflowBinding with the Workflow's name as its props. */
const bindingService = (deployed: ScriptToRun, workflow: string) => ({
  name: workflowsEngineName(deployed),
  entrypoint: 'WorkflowBinding',
  props: { json: JSON.stringify({ workflow }) },
});

/** The engine's binding service a served `workflow:<name>` entrypoint stands for, if it is one this script runs. */
export function workflowServed(deployed: ScriptToRun, entrypoint: string) {
  const workflow = hostedWorkflows(deployed).find((w) => workflowEntrypoint(w.workflow_name) === entrypoint);
  return workflow ? bindingService(deployed, workflow.workflow_name) : undefined;
}

/**
 * Where a script's Workflows keep their instances: `<data>/workflows/<account>/<script>`, beside the
 * Durable Objects' root (an instance is a Durable Object of the engine). One directory per script, so two
 * processes never share workerd's namespace metadata files.
 */
export function workflowsDir(durableObjectsDir: string, deployed: ScriptToRun): string {
  return join(dirname(durableObjectsDir), 'workflows', deployed.script.account_id, deployed.script.name);
}

/**
 * `workflow`: `env.MY_WORKFLOW`, workerd's own Workflow binding (`cloudflare-internal:workflows-api`) over
 * the engine's WorkflowBinding for that one Workflow: in process for a Workflow the script runs itself, through
 * the other script's process for one of another script of the account. While an upload is checked (no storage)
 * it is left out, as the engine is.
 */
export const workflowBinding: BindingModule<Extract<Binding, { type: 'workflow' }>> = (
  binding,
  { deployed, durableObjectsDir, serviceSocket },
) => {
  if (!durableObjectsDir) return { bindings: [] };
  const { account_id: account, name: self } = deployed.script;
  if (binding.script_name !== undefined && binding.script_name !== self) {
    // Another script's Workflow: its engine serves it on a socket of that script's process (service-sockets.ts),
    // reached as a service binding is, with Cap'n Proto RPC.
    if (!serviceSocket) throw new Error(`workflow binding ${binding.name}: the runtime has no service sockets`);
    const entrypoint = workflowEntrypoint(binding.workflow_name);
    const name = `workflow:${account}/${binding.script_name}#${binding.workflow_name}`;
    return {
      bindings: [
        {
          name: binding.name,
          wrapped: {
            moduleName: 'cloudflare-internal:workflows-api',
            innerBindings: [{ name: 'fetcher', service: name }],
          },
        },
      ],
      services: [
        {
          name,
          external: {
            address: `unix:${serviceSocket(account, binding.script_name, entrypoint)}`,
            http: { capnpConnectHost: SERVICE_RPC_HOST },
          },
        },
      ],
    };
  }
  return {
    bindings: [
      {
        name: binding.name,
        wrapped: {
          moduleName: 'cloudflare-internal:workflows-api',
          innerBindings: [{ name: 'fetcher', service: bindingService(deployed, binding.workflow_name) }],
        },
      },
    ],
  };
};

/**
 * The engine of the Workflows a script exports: the script's worker names it as its `workflowsEngine`
 * (each Workflow's instances are a namespace of the script whose actor class is the engine's `Engine`, and
 * workerd hands each instance the user's class to run), and the engine's worker keeps the instances on the
 * script's Workflows disk. Its default export answers the Ledge server through the ping service
 * (config/functions-config.ts); nothing else reaches it.
 */
export const workflowsEngine: PlatformBindingModule = ({ deployed, durableObjectsDir, clustered }) => {
  const workflows = hostedWorkflows(deployed);
  if (workflows.length === 0 || !durableObjectsDir) return { bindings: [] };
  const name = workflowsEngineName(deployed);
  // In a cluster, this node's copy of the instances of the script's cluster, apart from the one-node disk.
  const directory = join(workflowsDir(durableObjectsDir, deployed), ...(clustered ? ['cluster'] : []));
  const disk = `${name}:disk`;
  const names = [...new Set(workflows.map((w) => w.workflow_name))];
  const bindings: Worker_Binding[] = [
    { name: 'WORKFLOW_NAMES', json: JSON.stringify(names) },
    { name: 'WORKFLOWS', json: JSON.stringify({}) },
    { name: 'INDEX', durableObjectNamespace: { className: 'WorkflowIndex' } },
    ...names.flatMap((workflow): Worker_Binding[] => [
      {
        name: `workflow:${workflow}`,
        durableObjectNamespace: {
          className: namespaceClass(workflow),
          serviceName: `${deployed.script.account_id}/${deployed.script.name}`,
        },
      },
      { name: `binding:${workflow}`, service: bindingService(deployed, workflow) },
    ]),
  ];
  const engine: Service = {
    name,
    worker: {
      modules: [
        { name: 'ledge-workflows.js', esModule: WORKFLOWS_ENGINE_MODULE },
        { name: 'workflows.js', bundled: '/workerd/workflows.js' },
      ],
      compatibilityDate: ENGINE_COMPATIBILITY_DATE,
      compatibilityFlags: ['experimental'],
      bindings,
      durableObjectNamespaces: [{ className: 'WorkflowIndex', uniqueKey: 'ledge-workflow-index', enableSql: true }],
      durableObjectStorage: { localDisk: disk },
    },
  };
  const firstOf = new Map<string, string>();
  for (const w of workflows) if (!firstOf.has(w.workflow_name)) firstOf.set(w.workflow_name, w.class_name);
  return {
    bindings: [],
    workflowsEngine: {
      actorClass: { name, entrypoint: 'Engine' },
      workflows: [...firstOf].map(([workflow, className]) => ({
        className,
        name: workflow,
        bindingService: { name, entrypoint: 'WorkflowBinding' },
      })),
    },
    services: [engine, { name: disk, disk: { path: directory, writable: true } }],
    directories: [directory],
  };
};
