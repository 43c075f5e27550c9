/**
 * The setting that moves a listener's port, as the settings schema declares it (src/server/settings/,
 * `SETTINGS.port` and the like fit as they are): the error of a taken port names its flag and variable.
 */
export interface PortSetting {
  readonly flag: string | undefined;
  readonly env: string;
}

/**
 * The error of a server start on a port another process holds: names the port and the flag that moves it,
 * and says that a second server needs its own data dir too (two servers on one are refused, see
 * server/data-dir-lock.ts), so the user's next attempt does not run into that.
 */
export function portInUse(what: string, host: string, port: number, setting: PortSetting): Error {
  const where = setting.flag === undefined ? `env ${setting.env}` : `${setting.flag} (env ${setting.env})`;
  return new Error(
    `${what} port ${port} on ${host} is in use by another process (another ledge server?): ` +
      `stop it, or choose another port with ${where}; a second ledge server also needs its own --data-dir`,
  );
}
