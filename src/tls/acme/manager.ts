import * as acme from 'acme-client';
import type { SqlDatabase } from '../../db/index.ts';
import type { BackgroundService, JobGate } from '../../shared/background-service.ts';
import type { Clock } from '../../shared/clock.ts';
import type { SecretBox } from '../../shared/crypto.ts';
import { clip } from '../../shared/errors.ts';
import { newId } from '../../shared/ids.ts';
import type { Logger } from '../../shared/logger.ts';
import { isoNow, toIso } from '../../shared/time.ts';
import type { CertificateDirectory } from '../certificate-directory.ts';
import type { CertificateStore } from '../certificate-store.ts';
import { sealAad } from '../custom-certificates.ts';
import { readCertificateAndKey } from '../pem.ts';
import { acmeClient } from './account.ts';
import type { ChallengeStore, PendingChallenge } from './challenge-store.ts';
import type { AcmeOrderState, OrderStore } from './order-store.ts';

/** A hostname the traffic ports serve, with the zone it is on (only such names get certificates). */
export interface ServedHostname {
  hostname: string;
  zoneId: string;
  zoneName: string;
}

export interface AcmeSettings {
  /** The ACME directory (RFC 8555); undefined: no certificates are ordered. */
  directoryUrl: string | undefined;
  email: string | undefined;
  challenge: 'http-01' | 'tls-alpn-01';
  /** How often the names are checked (ms). */
  intervalMs: number;
  /** First retry after a failure (ms); doubled per failure, at most 6 hours. */
  retryMs: number;
}

export interface AcmeDeps {
  db: SqlDatabase;
  box: SecretBox;
  settings: AcmeSettings;
  hostnames: () => Promise<ServedHostname[]>;
  directory: CertificateDirectory;
  certificates: CertificateStore;
  challenges: ChallengeStore;
  orders: OrderStore;
  /** Runs after a challenge or a certificate changed (reload here, announce to the other nodes). */
  changed: () => Promise<void>;
  gate: JobGate;
  clock: Clock;
  logger: Logger;
}

const MAX_RETRY_MS = 6 * 3600_000;
const JOB = 'tls-acme-orders';

/**
 * Orders and renews ACME certificates (RFC 8555, through acme-client) for every hostname the traffic ports
 * serve that has no uploaded certificate: first when it has none, then once two thirds of its lifetime are
 * gone. One node at a time (the `tls-acme-orders` job lease); the challenge is put in the database before
 * the CA is told to check, so whichever node the CA reaches answers it; the certificate goes into the
 * database, so every node serves it. A failure is recorded on the hostname's order (the API shows it), logged,
 * and retried with backoff.
 */
export class AcmeManager implements BackgroundService {
  readonly name = 'tls-acme';
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #client: acme.Client | undefined;

  readonly #deps: AcmeDeps;

  constructor(deps: AcmeDeps) {
    this.#deps = deps;
  }

  async start(): Promise<void> {
    if (!this.#deps.settings.directoryUrl) return;
    this.#timer = setInterval(() => this.kick(), this.#deps.settings.intervalMs);
    this.#timer.unref();
    this.kick();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    // A pass stops between names; one order in flight (acme-client's polls) is waited for a few seconds.
    if (this.#running) {
      let bound: NodeJS.Timeout | undefined;
      await Promise.race([this.#running, new Promise((resolve) => (bound = setTimeout(resolve, 5_000)))]);
      clearTimeout(bound);
    }
  }

  /** Checks the names now (after a load balancer or public domain was added); one pass at a time. */
  kick(): void {
    if (this.#running || !this.#deps.settings.directoryUrl) return;
    this.#running = this.#pass()
      .catch((error: unknown) => this.#deps.logger.error('ACME pass failed', { err: error }))
      .finally(() => (this.#running = undefined));
  }

  async #pass(): Promise<void> {
    const deps = this.#deps;
    if (!(await deps.gate(JOB, Math.max(deps.settings.intervalMs * 3, 60_000)))) return;
    for (const served of await deps.hostnames()) {
      if (this.#timer === undefined) return;
      // Only names on the zone's own account's zone (the sources already join the zone; this holds it).
      if (served.hostname !== served.zoneName && !served.hostname.endsWith(`.${served.zoneName}`)) continue;
      if (served.hostname.startsWith('*.')) continue;
      if (!this.#due(served.hostname)) continue;
      const state = await deps.orders.get(served.hostname);
      if (state?.status === 'failed' && Date.parse(state.next_attempt_on) > deps.clock.now()) continue;
      await this.#order(served, state);
    }
  }

  /** No certificate serves the name, or its ACME certificate has less than a third of its life left. */
  #due(hostname: string): boolean {
    const current = this.#deps.directory.certificateFor(hostname);
    if (!current) return true;
    if (current.source === 'custom') return false;
    const expires = Date.parse(current.expires_on);
    const issued = Date.parse(current.uploaded_on);
    return expires - this.#deps.clock.now() < (expires - issued) / 3;
  }

  async #order(served: ServedHostname, previous: AcmeOrderState | undefined): Promise<void> {
    const deps = this.#deps;
    const { hostname } = served;
    const base = {
      hostname,
      zone_id: served.zoneId,
      certificate_id: previous?.certificate_id ?? null,
      failures: previous?.failures ?? 0,
    };
    await deps.orders.put({
      ...base,
      status: 'pending',
      last_error: previous?.last_error ?? null,
      next_attempt_on: isoNow(deps.clock),
      modified_on: isoNow(deps.clock),
    });
    try {
      const id = await this.#issue(served);
      await deps.orders.put({
        ...base,
        certificate_id: id,
        failures: 0,
        status: 'issued',
        last_error: null,
        next_attempt_on: isoNow(deps.clock),
        modified_on: isoNow(deps.clock),
      });
      deps.logger.info('ACME certificate issued', { hostname, certificate: id });
    } catch (error) {
      const failures = base.failures + 1;
      const delay = Math.min(deps.settings.retryMs * 2 ** (failures - 1), MAX_RETRY_MS);
      const message = clip(error instanceof Error ? error.message : String(error), 500);
      // One reading of the clock, so next_attempt_on - modified_on is exactly the delay.
      const failedAt = deps.clock.now();
      await deps.orders.put({
        ...base,
        failures,
        status: 'failed',
        last_error: message,
        next_attempt_on: toIso(failedAt + delay),
        modified_on: toIso(failedAt),
      });
      deps.logger.warn('ACME order failed', { hostname, error: message, failures, retry_in_ms: delay });
    }
  }

  async #issue(served: ServedHostname): Promise<string> {
    const deps = this.#deps;
    const now = isoNow(deps.clock);
    this.#client ??= await acmeClient(deps.db, deps.box, deps.settings.directoryUrl!, deps.settings.email, now);
    const client = this.#client;
    const order = await client.createOrder({ identifiers: [{ type: 'dns', value: served.hostname }] });
    for (const authz of await client.getAuthorizations(order)) {
      if (authz.status === 'valid') continue;
      const challenge = authz.challenges.find((c) => c.type === deps.settings.challenge);
      if (!challenge) throw new Error(`the CA offers no ${deps.settings.challenge} challenge`);
      const keyAuthorization = await client.getChallengeKeyAuthorization(challenge);
      const pending: PendingChallenge = {
        hostname: served.hostname,
        kind: deps.settings.challenge,
        token: challenge.token,
        keyAuthorization,
      };
      if (pending.kind === 'tls-alpn-01') {
        const [key, cert] = await acme.crypto.createAlpnCertificate(authz, keyAuthorization);
        pending.material = { key: key.toString('utf8'), cert: cert.toString('utf8') };
      }
      await deps.challenges.add(pending, now);
      await deps.changed();
      try {
        await client.completeChallenge(challenge);
        await client.waitForValidStatus(challenge);
      } finally {
        await deps.challenges.remove(pending);
        await deps.changed();
      }
    }
    const [key, csr] = await acme.crypto.createCsr(
      { altNames: [served.hostname] },
      await acme.crypto.createPrivateEcdsaKey('P-256'),
    );
    const finalized = await client.finalizeOrder(order, csr);
    const chain = await client.getCertificate(finalized);
    const privateKey = key.toString('utf8');
    const facts = readCertificateAndKey(chain, privateKey);
    const id = newId();
    await deps.certificates.put({
      id,
      zone_id: served.zoneId,
      source: 'acme',
      hosts: facts.hosts,
      certificate: facts.chain,
      sealed_key: deps.box.seal(privateKey, sealAad(id)),
      issuer: facts.issuer,
      signature: facts.signature,
      bundle_method: 'ubiquitous',
      priority: 0,
      expires_on: toIso(facts.expiresAt),
      uploaded_on: toIso(facts.issuedAt),
      modified_on: isoNow(deps.clock),
    });
    await this.#retireOlder(served, id);
    await deps.changed();
    return id;
  }

  /** The ACME certificates this one replaces (same zone, same single name) go. */
  async #retireOlder(served: ServedHostname, keep: string): Promise<void> {
    const deps = this.#deps;
    for (const old of await deps.certificates.listByZone(served.zoneId, 'acme')) {
      if (old.id !== keep && old.hosts.length === 1 && old.hosts[0] === served.hostname) {
        await deps.certificates.delete(served.zoneId, old.id);
      }
    }
  }
}
