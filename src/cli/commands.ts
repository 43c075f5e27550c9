import type { Command } from 'commander';

type Register = (program: Command) => void;

/**
 * Every top-level command of `ledge`, in the order `ledge --help` lists them, with the module that registers it.
 * The modules are imported only when needed: a command loads its own module and what that imports, not the
 * whole CLI. Loading every module cost the CLI ~20 MiB of memory on every run (commander, zod, the client, ws,
 * the email migration), which counts against a command such as `ledge object put` that must stay small.
 * A module that registers several commands is listed under each of them (`login`/`logout`); a command that
 * several modules extend lists each of them, in the order they must register (`notifications`).
 */
const TABLE: readonly (readonly [names: readonly string[], load: () => Promise<Register>])[] = [
  [['server'], async () => (await import('./server.ts')).registerServer],
  [['whoami'], async () => (await import('./whoami.ts')).registerWhoami],
  [['dashboard'], async () => (await import('./dashboard.ts')).registerDashboard],
  [['login', 'logout'], async () => (await import('./login.ts')).registerLogin],
  [['admin'], async () => (await import('./admin.ts')).registerAdmin],
  [['bucket'], async () => (await import('./bucket.ts')).registerBucket],
  [['object'], async () => (await import('./object.ts')).registerObject],
  [['s3'], async () => (await import('./s3.ts')).registerS3],
  [['pools'], async () => (await import('./pools.ts')).registerPools],
  [['monitors'], async () => (await import('./monitors.ts')).registerMonitors],
  [['zones'], async () => (await import('./zones.ts')).registerZones],
  [['lb'], async () => (await import('./load-balancers.ts')).registerLoadBalancers],
  [['notifications'], async () => (await import('./notifications.ts')).registerNotifications],
  [['mail'], async () => (await import('./mail.ts')).registerMail],
  // Adds `notifications migrate|migration-status` to the notifications noun: keep it after notifications.ts.
  [['notifications'], async () => (await import('./notifications-migration.ts')).registerMigrationCommands],
  [['create'], async () => (await import('./create-app.ts')).registerCreate],
  [['deploy'], async () => (await import('./deploy.ts')).registerDeploy],
  [['delete'], async () => (await import('./delete.ts')).registerDelete],
  [['secret'], async () => (await import('./secret.ts')).registerSecret],
  [['tail'], async () => (await import('./tail.ts')).registerTail],
  [['crons'], async () => (await import('./crons.ts')).registerCrons],
  [['scripts'], async () => (await import('./scripts.ts')).registerScripts],
  [['routes'], async () => (await import('./routes.ts')).registerRoutes],
];

/** The names of the top-level commands, from the table. */
export const COMMAND_NAMES: readonly string[] = [...new Set(TABLE.flatMap(([names]) => names))];

/**
 * Registers on `program` the modules of `command`, or of every command when it is undefined or not one of
 * ours (help, `--version`, an unknown command whose error suggests the closest ones).
 */
export async function registerCommands(program: Command, command: string | undefined): Promise<void> {
  const known = command !== undefined && COMMAND_NAMES.includes(command);
  const entries = known ? TABLE.filter(([names]) => names.includes(command)) : TABLE;
  // Imported in parallel, registered in the table's order.
  const registers = await Promise.all(entries.map(([, load]) => load()));
  for (const register of registers) register(program);
}
