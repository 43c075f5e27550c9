import { AccountService, SqliteAccountStore } from '../accounts/index.ts';
import { Database, migrate } from '../db/index.ts';
import type { SecretBox } from '../shared/crypto.ts';
import { createLogger, type Logger } from '../shared/logger.ts';
import type { ServerConfig } from './config.ts';
import { dataPaths, ensureDataDir, loadSecretBox } from './data-dir.ts';
import { allMigrations } from './migrations.ts';

/** A long-running part of the platform (health checker, dispatcher, runtime supervisor). */
export interface BackgroundService {
  name: string;
  start(): Promise<void> | void;
  stop(): Promise<void> | void;
}

/**
 * Every service of one running platform, composed once in dependency order. Subsystems receive what
 * they need from here; nothing reaches for globals.
 */
export interface Platform {
  config: ServerConfig;
  paths: ReturnType<typeof dataPaths>;
  db: Database;
  logger: Logger;
  secretBox: SecretBox;
  accounts: AccountService;
  /** Started after the API listens, stopped in reverse order on shutdown. */
  background: BackgroundService[];
}

export function createPlatform(config: ServerConfig, logger: Logger = createLogger(config.logLevel)): Platform {
  ensureDataDir(config.dataDir);
  const paths = dataPaths(config.dataDir);
  const db = new Database(paths.database);
  migrate(db, allMigrations);
  const secretBox = loadSecretBox(config.dataDir, config.secretKey);
  const accounts = new AccountService(new SqliteAccountStore(db));
  const background: BackgroundService[] = [];
  return { config, paths, db, logger, secretBox, accounts, background };
}
