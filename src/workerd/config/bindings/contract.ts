import type { EgressRule } from '../../isolate/contract.ts';
import type { IsolateParams } from '../../isolate-modules.ts';
import type { ScriptToRun } from '../../script.ts';
import type { R2ServiceResolver } from '../input.ts';
import type { Service, Worker, Worker_Binding, Worker_DurableObjectNamespace } from '../types.ts';

/**
 * What one binding module adds for one script: entries of the script's worker, and what the config needs
 * around them. Merged by script-worker.ts; nothing here is written or made while the config is built.
 */
export interface Contribution {
  /** Entries of the script's `bindings`, in order. */
  bindings: Worker_Binding[];
  /** Services the bindings name. By name: a service several scripts name (one bucket's) is written once. */
  services?: Service[];
  /** Absolute directories the runtime makes (0700) before workerd starts, e.g. a disk service's root. */
  directories?: string[];
  /** Durable Object classes of the script's own worker (its `durableObjectNamespaces`). */
  durableObjectNamespaces?: Worker_DurableObjectNamespace[];
  /** Where the worker's Durable Objects keep their storage (at most one module of a worker sets it). */
  durableObjectStorage?: Worker['durableObjectStorage'];
  /** The engine that runs the Workflows the script exports (at most one module of a worker sets it). */
  workflowsEngine?: Worker['workflowsEngine'];
  /** Constants for the platform's modules in the script's isolate (`__ledge/params.js`). */
  params?: Partial<IsolateParams>;
}

/** What binding modules know of the script and of the runtime. */
export interface ScriptContext {
  deployed: ScriptToRun;
  r2: R2ServiceResolver;
  /** Absolute path of the tail flags (tail-traces.ts). */
  tailFlagsDir: string;
  /** The secret the ping service (and only it) asks the script's isolate for its counts with (isolate/metrics.ts). */
  metricsSecret: string;
  /** Functions' egress lists as the isolate's egress module compares them; null: unrestricted. */
  egressRules: { allow: EgressRule[]; deny: EgressRule[] } | null;
  /**
   * Root of the accounts' Durable Object storage (`<root>/<account>/<namespace id>/`); none: objects keep
   * their storage in memory (the upload check, which must never open the live objects' files).
   */
  durableObjectsDir?: string | undefined;
  /**
   * The script's process is one instance of its workerd cluster (several nodes): its objects' disks are this
   * node's copies of the cluster's objects, kept apart from the one-node disks (workerd refuses a disk that
   * holds objects from before cluster mode).
   */
  clustered?: boolean | undefined;
  /** Where the account's data engines listen (engine-host.ts); without it, no KV or D1 binding can be configured. */
  engineSockets?: EngineSockets | undefined;
  /** The stable socket path of another script's entrypoint (service-sockets.ts); unset where none is reachable. */
  serviceSocket?: ((accountId: string, script: string, entrypoint: string) => string) | undefined;
}

/** The unix socket of an engine kind of an account (engine-host.ts). */
export interface EngineSockets {
  socketPath(kind: string, accountId: string): string;
  /** The account's queue engine socket (its own process); without it, no queue binding can be configured. */
  queueSocketPath?: ((accountId: string) => string) | undefined;
}

/** Turns one of a script's bindings (as the upload's metadata gives it, script.ts Binding) into config. */
export type BindingModule<B> = (binding: B, context: ScriptContext) => Contribution;

/** A binding the platform gives every script besides the user's (least privilege: each reaches only its script's). */
export type PlatformBindingModule = (context: ScriptContext) => Contribution;
