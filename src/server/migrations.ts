import { accountMigrations } from '../accounts/index.ts';
import type { SchemaMigration } from '../db/index.ts';
import { secretKeyCheckMigrations } from './secret-key-check.ts';
import { loadBalancingMigrations } from '../load-balancing/index.ts';
import { notificationMigrations } from '../notifications/index.ts';
import { workerMigrations } from '../workers/index.ts';
import { zoneMigrations } from '../zones/index.ts';
import { storageMigrations } from '../storage/index.ts';
import { clusterMigrations } from '../cluster/index.ts';
import { r2Migrations } from '../r2/index.ts';
import { kvMigrations } from '../kv/index.ts';
import { dashboardMigrations } from '../dashboard/index.ts';
import { workerRouteMigrations } from '../worker-routes/index.ts';
import { d1Migrations } from '../d1/index.ts';
import { queuesMigrations } from '../queues/index.ts';
import { tlsMigrations } from '../tls/index.ts';
import { workflowMigrations } from '../workflows/index.ts';

/** Every subsystem's migrations, in dependency order. Applied on every start; each runs once. */
export const allMigrations: readonly SchemaMigration[] = [
  ...secretKeyCheckMigrations,
  ...accountMigrations,
  // Before load balancing: load balancers belong to zones.
  ...zoneMigrations,
  ...loadBalancingMigrations,
  ...notificationMigrations,
  ...workerMigrations,
  // Workers routes and Custom Domains live in zones.
  ...workerRouteMigrations,
  ...storageMigrations,
  // Workers KV namespaces.
  ...kvMigrations,
  // Public bucket domains refer to buckets and zones.
  ...r2Migrations,
  // Nodes and job leases of several nodes sharing the database.
  ...clusterMigrations,
  // Dashboard sessions, shared by the nodes.
  ...dashboardMigrations,
  // D1 databases belong to accounts.
  ...d1Migrations,
  // Certificates and zone TLS settings belong to zones.
  ...tlsMigrations,
  // Queues and their consumers belong to accounts.
  ...queuesMigrations,
  // Workflows belong to accounts.
  ...workflowMigrations,
];
