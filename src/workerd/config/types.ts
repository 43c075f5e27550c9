/**
 * A workerd configuration as typed records: each interface mirrors a struct of workerd's schema
 * (node_modules/workerd/workerd.capnp) field for field, under the schema's own field names, so that
 * serialize.ts can write any record without knowing it. A capnp union is a TypeScript union of
 * records each holding one of its members; a group is a nested record. Fields left undefined are left
 * out (workerd's defaults apply). Only what Ledge writes, or is about to, is declared: add a field here
 * under its schema name and it serialises.
 */

/** A Void member of a union (`unsafeEval = void`). */
export const VOID: unique symbol = Symbol('capnp void');
export type Void = typeof VOID;

/** A Text or Data field read by workerd from a file beside the config (`embed "<path>"`), relative to its directory. */
export class Embed {
  readonly path: string;
  constructor(path: string) {
    this.path = path;
  }
}

/** An enumerant (written bare, `style = proxy`, where a Text field is written quoted). */
export class Enumerant<T extends string = string> {
  readonly name: T;
  constructor(name: T) {
    this.name = name;
  }
}

export type Text = string | Embed;
export type Data = Uint8Array | Embed;

export interface Config {
  services?: Service[];
  sockets?: Socket[];
  v8Flags?: string[];
  extensions?: Extension[];
  autogates?: string[];
  structuredLogging?: boolean;
  cluster?: ClusterConfig;
}

export interface ClusterConfig {
  bucket?: string;
  bucketOptions?: string[];
  address?: string;
  advertise?: string;
  key?: string;
  unsafePublicAddress?: boolean;
  stopTimeoutMs?: number;
  unsafeTimeDivisor?: number;
}

export type Socket = { name: string; address?: string } & (
  | { http: HttpOptions }
  | { https: { options?: HttpOptions; tlsOptions?: TlsOptions } }
  | { tcp: { tlsOptions?: TlsOptions; tlsMode?: Enumerant<'implicit' | 'startTls'> } }
) & { service?: ServiceDesignator };

export type Service = { name: string } & (
  | { worker: Worker }
  | { network: Network }
  | { external: ExternalServer }
  | { disk: DiskDirectory }
  | { bucket: ClusterBucket }
  | { assets: AssetsService }
);

export interface ClusterBucket {
  path?: string;
}

export interface AssetsService {
  path?: string;
  config?: Text;
  userWorker?: ServiceDesignator;
  compatibilityDate?: string;
  compatibilityFlags?: string[];
}

/** A service by name: a bare name is written as a string, which the schema accepts for the struct. */
export type ServiceDesignator =
  string | { name: string; entrypoint?: string; props?: { empty: Void } | { json: string } };

export type Worker = ({ modules: Worker_Module[] } | { serviceWorkerScript: Text } | { inherit: string }) & {
  compatibilityDate?: string;
  compatibilityFlags?: string[];
  bindings?: Worker_Binding[];
  globalOutbound?: ServiceDesignator;
  cacheApiOutbound?: ServiceDesignator;
  durableObjectNamespaces?: Worker_DurableObjectNamespace[];
  durableObjectUniqueKeyModifier?: string;
  durableObjectStorage?: { none: Void } | { inMemory: Void } | { localDisk: string };
  moduleFallback?: string;
  tails?: ServiceDesignator[];
  workflowsEngine?: WorkflowsEngine;
};

export interface WorkflowsEngine {
  actorClass: ServiceDesignator;
  workflows: { className: string; name: string; bindingService: ServiceDesignator }[];
}

export type Worker_Module = { name: string } & (
  | { esModule: Text }
  | { commonJsModule: Text }
  | { text: Text }
  | { data: Data }
  | { wasm: Data }
  | { json: Text }
  /** A module workerd ships (`/workerd/d1.js`, `/workerd/kv.js`...), the source of an engine's Worker. */
  | { bundled: string }
) & { namedExports?: string[] };

export type Worker_Binding = { name: string } & (
  | { text: Text }
  | { data: Data }
  | { json: Text }
  | { wasmModule: Data }
  | { service: ServiceDesignator }
  | { durableObjectClass: ServiceDesignator }
  | { durableObjectNamespace: Worker_DurableObjectNamespaceDesignator }
  | { kvNamespace: ServiceDesignator }
  | { r2Bucket: ServiceDesignator }
  | { wrapped: Worker_WrappedBinding }
  | { queue: ServiceDesignator }
  | { fromEnvironment: string }
  | { analyticsEngine: ServiceDesignator }
  | { unsafeEval: Void }
  | { memoryCache: { id?: string; limits?: { maxKeys?: number; maxValueSize?: number; maxTotalValueSize?: number } } }
);

export interface Worker_DurableObjectNamespaceDesignator {
  className: string;
  serviceName?: string;
}

export interface Worker_WrappedBinding {
  moduleName: string;
  entrypoint?: string;
  innerBindings?: Worker_Binding[];
}

export type Worker_DurableObjectNamespace = { className: string } & (
  { uniqueKey: string } | { ephemeralLocal: Void }
) & { preventEviction?: boolean; enableSql?: boolean };

export type ExternalServer = { address: string } & (
  | { http: HttpOptions }
  | { https: { options?: HttpOptions; tlsOptions?: TlsOptions; certificateHost?: string } }
  | { tcp: { tlsOptions?: TlsOptions; certificateHost?: string } }
);

export interface Network {
  allow?: string[];
  deny?: string[];
  tlsOptions?: TlsOptions;
}

export interface DiskDirectory {
  path: string;
  writable?: boolean;
  allowDotfiles?: boolean;
}

export interface HttpOptions {
  style?: Enumerant<'host' | 'proxy'>;
  forwardedProtoHeader?: string;
  cfBlobHeader?: string;
  injectRequestHeaders?: HttpOptions_Header[];
  injectResponseHeaders?: HttpOptions_Header[];
  capnpConnectHost?: string;
}

export interface HttpOptions_Header {
  name: string;
  value?: string;
}

export interface TlsOptions {
  keypair?: { privateKey?: Text; certificateChain?: Text };
  requireClientCerts?: boolean;
  trustBrowserCas?: boolean;
  trustedCertificates?: Text[];
  minVersion?: Enumerant<'goodDefault' | 'ssl3' | 'tls1Dot0' | 'tls1Dot1' | 'tls1Dot2' | 'tls1Dot3'>;
  cipherList?: string;
}

export interface Extension {
  modules?: { name: string; internal?: boolean; esModule: Text }[];
}
