import { randomUUID } from 'node:crypto';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { BuiltConfig } from './built.ts';
import { serializeConfig } from './serialize.ts';

/**
 * Puts a built config on disk for workerd: `<dir>/config.capnp` and the files it embeds (0600, in 0700
 * folders: the config holds decrypted secrets), and makes the directories it needs. Returns the config's path.
 */
export function writeConfig(dir: string, built: BuiltConfig): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const directory of built.directories) mkdirSync(directory, { recursive: true, mode: 0o700 });
  for (const file of built.files) {
    const path = join(dir, file.path);
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileSync(path, file.content, { mode: 0o600 });
  }
  const path = join(dir, 'config.capnp');
  writeFileSync(path, serializeConfig(built.config), { mode: 0o600 });
  return path;
}

/** What the front processes route: `<script>.<subdomain>` -> `S<slot>`, and the hosts of quarantined scripts. */
export interface FrontRoutes {
  routes: Record<string, string>;
  quarantined: Record<string, true>;
}

/** Replaces `<routesDir>/routes.json` atomically (the routers read it while it changes). */
export function writeFrontRoutes(routesDir: string, table: FrontRoutes): void {
  mkdirSync(routesDir, { recursive: true, mode: 0o700 });
  const temporary = join(routesDir, `.routes-${randomUUID()}.json`);
  writeFileSync(temporary, JSON.stringify(table), { mode: 0o600 });
  renameSync(temporary, join(routesDir, 'routes.json'));
}
