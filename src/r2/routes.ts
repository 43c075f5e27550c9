import { Hono } from 'hono';
import type { AppEnv } from '../api-kit/context.ts';
import type { LedgeMetrics } from '../shared/ledge-metrics.ts';
import type { StorageService } from '../storage/index.ts';
import { bucketRoutes } from './bucket-routes.ts';
import { corsRoutes } from './cors-routes.ts';
import { lifecycleRoutes } from './lifecycle-routes.ts';
import { objectRoutes } from './object-routes.ts';
import { uploadRoutes } from './upload-routes.ts';

/** Every /client/v4 route of object storage. */
export function r2Routes(storage: StorageService, metrics?: LedgeMetrics): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.route('/', bucketRoutes(storage));
  app.route('/', lifecycleRoutes(storage));
  app.route('/', corsRoutes(storage));
  app.route('/', objectRoutes(storage, metrics));
  app.route('/', uploadRoutes(storage, metrics));
  return app;
}
