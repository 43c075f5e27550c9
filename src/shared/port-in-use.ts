/** The error of a server start on a port another process holds: names the port and the flag that moves it. */
export function portInUse(what: string, host: string, port: number, flag: string): Error {
  return new Error(
    `${what} port ${port} on ${host} is in use by another process (another ledge server?): ` +
      `stop it, or choose another port with ${flag}`,
  );
}
