import type { ConfigFiles } from '../built.ts';
import type { Service, Socket } from '../types.ts';

/** Where one account's engines keep their data and listen. Absolute paths; the host makes neither. */
export interface EnginesInput {
  /** The account the process serves (a kind may key its Durable Objects by it). */
  accountId: string;
  /** The account's engine data (`<data>/engines/<account>`): each kind keeps its own folder under it. */
  dataDir: string;
  /** Where the account's engine sockets are (`<data>/runtime/engines/<account>`), one per kind. */
  socketDir: string;
  /**
   * Set when the process is one instance of a workerd cluster (several nodes): each Durable Object then lives in
   * the cluster's bucket and has one owner at a time, `dataDir` is only this node's copy, and what a kind kept in
   * a disk of its own beside its objects (KV's blobs) goes to the bucket, where every node sees it.
   */
  clustered?: boolean;
}

/** What one engine kind adds to an account's engines process. */
export interface EngineContribution {
  services: Service[];
  /** Its unix socket: the only way in, reached by the account's scripts and by the API server. */
  socket: Socket;
  /** Absolute directories made (0700) before workerd starts: the kind's Durable Object storage and blobs. */
  directories: string[];
}

/**
 * One kind of data engine (KV, D1, ...): a bundled workerd module, run for one account, reached on one socket.
 * Which namespace or database a request is for travels in a header the caller's config injects (see
 * engines/shim.ts): the process serves exactly one account, so that header can only name that account's data.
 * A kind that needs settings (D1's database size cap) is made by a factory taking them.
 */
export interface EngineKind {
  /** Its name: the socket's name and file (`<socketDir>/<name>.sock`) and its folder under `dataDir`. */
  name: string;
  build(input: EnginesInput, files: ConfigFiles): EngineContribution;
}
