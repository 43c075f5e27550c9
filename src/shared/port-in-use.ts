/**
 * The error of a server start on a port another process holds: names the port and the flag that moves it,
 * and says that a second server needs its own data dir too (two servers on one are refused, see
 * server/data-dir-lock.ts), so the user's next attempt does not run into that.
 */
export function portInUse(what: string, host: string, port: number, flag: string): Error {
  return new Error(
    `${what} port ${port} on ${host} is in use by another process (another ledge server?): ` +
      `stop it, or choose another port with ${flag}; a second ledge server also needs its own --data-dir`,
  );
}
