import type { Binding } from '../../script.ts';
import type { BindingModule, Contribution, PlatformBindingModule, ScriptContext } from './contract.ts';
import { assetsBinding } from './assets.ts';
import { durableObjectClasses, durableObjectNamespace } from './durable-object.ts';
import { d1Database } from './d1.ts';
import { egress } from './egress.ts';
import { json } from './json.ts';
import { localReads } from './local-reads.ts';
import { metricsSecret } from './metrics-secret.ts';
import { plainText } from './plain-text.ts';
import { r2Bucket } from './r2.ts';
import { kvNamespace } from './kv.ts';
import { queueProducer } from './queue.ts';
import { serviceBinding } from './service.ts';
import { tailFlags } from './tail-flags.ts';
import { workflowBinding, workflowsEngine } from './workflow.ts';

export type { BindingModule, Contribution, PlatformBindingModule, ScriptContext } from './contract.ts';
export { secretText } from './secret.ts';

/**
 * Each kind of binding a script may have (script.ts Binding, by its `type` as wrangler sends it) and the
 * module that turns it into config. The type makes the table whole: a kind added to Binding needs its line.
 */
export const BINDING_KINDS: { [T in Binding['type']]: BindingModule<Extract<Binding, { type: T }>> } = {
  r2_bucket: r2Bucket,
  kv_namespace: kvNamespace,
  plain_text: plainText,
  json,
  durable_object_namespace: durableObjectNamespace,
  d1: d1Database,
  service: serviceBinding,
  queue: queueProducer,
  workflow: workflowBinding,
};

/** The bindings the platform gives every script, after the user's, in this order. */
export const PLATFORM_BINDINGS: readonly PlatformBindingModule[] = [
  assetsBinding,
  tailFlags,
  localReads,
  metricsSecret,
  egress,
  durableObjectClasses,
  workflowsEngine,
];

/** One of the script's own bindings as config, by its kind's module. */
export function bindingContribution(binding: Binding, context: ScriptContext): Contribution {
  const module = BINDING_KINDS[binding.type] as BindingModule<Binding>;
  return module(binding, context);
}
