import type { AddressInfo, Server } from 'node:net';
import { portInUse, type PortSetting } from './port-in-use.ts';

/** Where a listener listens, and how a failure to is told. */
export interface ListenTarget {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  /** What it serves, as the errors name it ("API", "S3 API", "load balancer traffic"). */
  what: string;
  /** The setting that moves the port (its flag and variable go into the port-in-use error). */
  setting: PortSetting;
  /** What it serves in the other errors of a listen ("for the API"); default: `the <what>`. */
  purpose?: string;
}

/**
 * Listens on host:port and resolves with the port listened on. A port another process holds is refused
 * with the error that names the setting moving it; any other failure names what could not listen.
 */
export function listen(server: Server, target: ListenTarget): Promise<number> {
  const { host, port, what } = target;
  const purpose = target.purpose ?? `the ${what}`;
  return new Promise<number>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? portInUse(what, host, port, target.setting)
          : new Error(`cannot listen on ${host}:${port} for ${purpose}: ${error.message}`),
      );
    server.once('error', onError);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

/**
 * Listens on a unix socket only this user may connect to: bound under a restrictive umask, so there is no
 * window before a chmod in which others could connect.
 */
export function listenPrivately(server: Server, path: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    const previous = process.umask(0o177);
    try {
      server.listen(path, () => resolve());
    } finally {
      process.umask(previous);
    }
  });
}
