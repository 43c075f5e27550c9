import type { BackgroundService } from '../shared/background-service.ts';
import type { ApiApp } from './context.ts';

/**
 * How every subsystem is assembled, one contract for all: its folder exports `<name>Migrations` (listed in
 * src/server/migrations.ts, applied before anything is built) and `create<Name>Subsystem(deps)`, which
 * builds its services from what it is handed (never from globals; its tunables arrive typed, as its part of the
 * server's settings, src/server/settings/schema.ts) and returns this. The composition root
 * (src/server/platform.ts) builds the subsystems in dependency order, the API app mounts their routes in
 * that order, and the server starts their background services after the API listens and stops them in
 * reverse. Building one starts nothing.
 */
export interface Subsystem {
  /** Short name, for logs and errors ("load-balancing"). */
  readonly name: string;
  /** Mounts the subsystem's /client/v4 routes on the app. */
  mountRoutes(api: ApiApp): void;
  /**
   * Mounts routes that authenticate by a token of their own instead of an API token (the assets upload of
   * Workers takes its session's token, as on Cloudflare): mounted before the API's authentication.
   */
  mountTokenRoutes?(api: ApiApp): void;
  /** Its long-running parts (checker, dispatcher, runtime supervisor), in start order. */
  readonly background: readonly BackgroundService[];
}
