import { readFileSync } from 'node:fs';
import { Agent } from 'node:https';
import * as acme from 'acme-client';
import type { Subsystem } from '../api-kit/subsystem.ts';
import type { SqlDatabase } from '../db/index.ts';
import type { HostHandler } from '../proxy/index.ts';
import type { JobGate } from '../shared/background-service.ts';
import type { Clock } from '../shared/clock.ts';
import type { SecretBox } from '../shared/crypto.ts';
import type { Logger } from '../shared/logger.ts';
import { ChallengeStore } from './acme/challenge-store.ts';
import { AcmeManager, type AcmeSettings, type ServedHostname } from './acme/manager.ts';
import { OrderStore } from './acme/order-store.ts';
import { CertificateDirectory } from './certificate-directory.ts';
import { CertificatePacks } from './certificate-packs.ts';
import { CertificateStore } from './certificate-store.ts';
import { CustomCertificateService, type ZoneResolver } from './custom-certificates.ts';
import { plainHostHandler } from './plain-host-handler.ts';
import { tlsRoutes } from './routes.ts';
import { ZoneTlsSettings } from './zone-tls-settings.ts';

export interface TlsSettings extends AcmeSettings {
  /** PEM file of CAs trusted for the ACME directory's HTTPS (a private CA, pebble in tests). */
  directoryCaFile: string | undefined;
}

export interface TlsSubsystem extends Subsystem {
  /** The TLS port's certificates, policies and challenges, in memory (its TlsTermination). */
  directory: CertificateDirectory;
  acme: AcmeManager;
  /** The plain traffic port's host handler: challenges and always_use_https in front of `inner`. */
  plainHostHandler(inner: HostHandler | undefined, httpsPort: () => number | undefined): HostHandler;
  /** Reloads what the TLS port serves (another node changed something). */
  refresh(): Promise<void>;
}

const RELOAD_MS = 30_000;

/** HTTPS on the traffic TLS port: uploaded and ACME certificates, zone TLS settings. */
export function createTlsSubsystem(deps: {
  db: SqlDatabase;
  box: SecretBox;
  zones: ZoneResolver;
  settings: TlsSettings;
  /** Every hostname the traffic ports serve, with its zone. */
  hostnames: () => Promise<ServedHostname[]>;
  /** Tells the other nodes that certificates, challenges or settings changed. */
  announce: () => void;
  gate: JobGate;
  clock: Clock;
  logger: Logger;
}): TlsSubsystem {
  const { db, box, clock } = deps;
  const logger = deps.logger.child({ component: 'tls' });
  if (deps.settings.directoryCaFile) {
    // acme-client talks through its own axios instance: the directory's CA is trusted there only.
    acme.axios.defaults.httpsAgent = new Agent({ ca: readFileSync(deps.settings.directoryCaFile) });
  }
  const certificates = new CertificateStore(db);
  const challenges = new ChallengeStore(db, box);
  const orders = new OrderStore(db);
  const changed = async () => {
    await directory.reload();
    deps.announce();
  };
  const settings = new ZoneTlsSettings({ db, zones: deps.zones, clock, changed });
  const directory = new CertificateDirectory({
    certificates,
    challenges,
    policies: () => settings.policies(),
    box,
    clock,
    logger,
  });
  const custom = new CustomCertificateService({ store: certificates, box, zones: deps.zones, changed, clock });
  const packs = new CertificatePacks({ zones: deps.zones, orders, certificates });
  const acmeManager = new AcmeManager({
    db,
    box,
    settings: deps.settings,
    hostnames: deps.hostnames,
    directory,
    certificates,
    challenges,
    orders,
    changed,
    gate: deps.gate,
    clock,
    logger,
  });
  let timer: NodeJS.Timeout | undefined;
  const reloader = {
    name: 'tls-certificates',
    start: async () => {
      await directory.reload();
      timer = setInterval(() => {
        directory.reload().catch((error: unknown) => logger.warn('certificate reload failed', { err: error }));
      }, RELOAD_MS);
      timer.unref();
    },
    stop: () => clearInterval(timer),
  };
  return {
    name: 'tls',
    directory,
    acme: acmeManager,
    plainHostHandler: (inner, httpsPort) => plainHostHandler(directory, inner, httpsPort),
    refresh: () => directory.reload(),
    background: [reloader, acmeManager],
    mountRoutes: (api) => api.route('/', tlsRoutes({ custom, settings, packs })),
  };
}
