import { existsSync, rmSync } from 'node:fs';
import { pointServiceSocket } from './service-sockets.ts';
import type { WorkerdProcess } from './workerd-process.ts';

/** How often, and how many times, to look for a ready process's entrypoint sockets (bound with its others). */
const LOOK_EVERY_MS = 5;
const LOOKS = 400;

/**
 * Makes a ready process the one its callers reach: once workerd has bound each entrypoint socket, the
 * stable path callers' configs name is pointed at it (service-sockets.ts). The sockets go with the process.
 */
export async function exposeEntrypoints(
  process: WorkerdProcess,
  sockets: readonly { stable: string; socket: string }[],
): Promise<void> {
  if (sockets.length === 0) return;
  void process.exited.then(() => {
    for (const { socket } of sockets) rmSync(socket, { force: true });
  });
  for (let look = 0; look < LOOKS && !sockets.every(({ socket }) => existsSync(socket)); look++) {
    await new Promise((resolve) => setTimeout(resolve, LOOK_EVERY_MS));
  }
  const missing = sockets.find(({ socket }) => !existsSync(socket));
  if (missing) throw new Error(`workerd did not bind the service socket ${missing.socket}`);
  for (const { stable, socket } of sockets) pointServiceSocket(stable, socket);
}
