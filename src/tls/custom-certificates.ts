import { z } from 'zod';
import type { Principal } from '../accounts/index.ts';
import { parseWith } from '../api-kit/body.ts';
import type { SecretBox } from '../shared/crypto.ts';
import { LedgeError } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import { isoNow, toIso } from '../shared/time.ts';
import type { Clock } from '../shared/clock.ts';
import type { ZoneRef } from '../zones/index.ts';
import type { CertificateStore, StoredCertificate } from './certificate-store.ts';
import { CERTIFICATE_INVALID_CODE, readCertificateAndKey } from './pem.ts';

const BUNDLE_METHODS = ['ubiquitous', 'optimal', 'force'] as const;

/** Body of POST /zones/{id}/custom_certificates (the SDK's CustomCertificateCreateParams). */
const CreateSchema = z.object({
  certificate: z.string({ error: 'certificate is required (PEM)' }).min(1, 'certificate is required (PEM)'),
  private_key: z.string({ error: 'private_key is required (PEM)' }).min(1, 'private_key is required (PEM)'),
  bundle_method: z.enum(BUNDLE_METHODS).default('ubiquitous'),
  type: z.enum(['legacy_custom', 'sni_custom']).optional(),
  geo_restrictions: z.object({ label: z.enum(['us', 'eu', 'highest_security']) }).optional(),
  policy: z.string().optional(),
  deploy: z.enum(['staging', 'production']).optional(),
  custom_csr_id: z.string().optional(),
});

/** Body of PATCH (CustomCertificateEditParams): a new chain and key together, or only the bundle method. */
const EditSchema = CreateSchema.partial().extend({ bundle_method: z.enum(BUNDLE_METHODS).optional() });

export const customCertificateErrors = {
  notFound: () => new LedgeError(404, 1400, 'Certificate not found.'),
  keyWithoutCertificate: () =>
    new LedgeError(400, CERTIFICATE_INVALID_CODE, 'certificate and private_key must be sent together.'),
} as const;

/** The zone a route names, resolved for the caller (another account's zone answers as an unknown one). */
export type ZoneResolver = (principal: Principal, zoneId: string) => Promise<ZoneRef>;

/**
 * Uploaded certificates (`/zones/{zone_id}/custom_certificates`). The key is sealed with the server's secret
 * key (bound to the certificate's id) before it is stored and is never rendered: answers carry the facts of
 * the chain only. `changed` runs after each write (the in-memory certificate directory reloads).
 */
export class CustomCertificateService {
  private readonly store: CertificateStore;
  private readonly box: SecretBox;
  private readonly zones: ZoneResolver;
  private readonly changed: () => Promise<void>;
  private readonly clock: Clock;

  constructor(deps: {
    store: CertificateStore;
    box: SecretBox;
    zones: ZoneResolver;
    changed: () => Promise<void>;
    clock: Clock;
  }) {
    this.store = deps.store;
    this.box = deps.box;
    this.zones = deps.zones;
    this.changed = deps.changed;
    this.clock = deps.clock;
  }

  async create(principal: Principal, zoneId: string, body: unknown) {
    const zone = await this.zones(principal, zoneId);
    const input = parseWith(CreateSchema, body, CERTIFICATE_INVALID_CODE);
    const facts = readCertificateAndKey(input.certificate, input.private_key);
    const id = newId();
    const now = isoNow(this.clock);
    const existing = await this.store.listByZone(zone.id, 'custom');
    const stored: StoredCertificate = {
      id,
      zone_id: zone.id,
      source: 'custom',
      hosts: facts.hosts,
      certificate: facts.chain,
      sealed_key: this.box.seal(input.private_key, sealAad(id)),
      issuer: facts.issuer,
      signature: facts.signature,
      bundle_method: input.bundle_method,
      priority: existing.length + 1,
      expires_on: toIso(facts.expiresAt),
      uploaded_on: now,
      modified_on: now,
    };
    await this.store.put(stored);
    await this.changed();
    return render(stored, this.clock);
  }

  async list(principal: Principal, zoneId: string) {
    const zone = await this.zones(principal, zoneId);
    return (await this.store.listByZone(zone.id, 'custom')).map((stored) => render(stored, this.clock));
  }

  async get(principal: Principal, zoneId: string, id: string) {
    const zone = await this.zones(principal, zoneId);
    return render(await this.#find(zone.id, id), this.clock);
  }

  async edit(principal: Principal, zoneId: string, id: string, body: unknown) {
    const zone = await this.zones(principal, zoneId);
    const input = parseWith(EditSchema, body, CERTIFICATE_INVALID_CODE);
    const stored = await this.#find(zone.id, id);
    if ((input.certificate === undefined) !== (input.private_key === undefined)) {
      throw customCertificateErrors.keyWithoutCertificate();
    }
    const next: StoredCertificate = { ...stored, modified_on: isoNow(this.clock) };
    if (input.certificate !== undefined && input.private_key !== undefined) {
      const facts = readCertificateAndKey(input.certificate, input.private_key);
      Object.assign(next, {
        hosts: facts.hosts,
        certificate: facts.chain,
        sealed_key: this.box.seal(input.private_key, sealAad(id)),
        issuer: facts.issuer,
        signature: facts.signature,
        expires_on: toIso(facts.expiresAt),
      });
    }
    if (input.bundle_method) next.bundle_method = input.bundle_method;
    await this.store.put(next);
    await this.changed();
    return render(next, this.clock);
  }

  async delete(principal: Principal, zoneId: string, id: string) {
    const zone = await this.zones(principal, zoneId);
    if (!(await this.store.delete(zone.id, id))) throw customCertificateErrors.notFound();
    await this.changed();
    return { id };
  }

  async #find(zoneId: string, id: string): Promise<StoredCertificate> {
    const stored = await this.store.get(zoneId, id);
    if (!stored || stored.source !== 'custom') throw customCertificateErrors.notFound();
    return stored;
  }
}

/** The additional data a certificate's sealed key is bound to: it opens only for that certificate. */
export function sealAad(certificateId: string): string {
  return `tls certificate key ${certificateId}`;
}

/** A certificate as the API answers it (the SDK's CustomCertificate): never the key. */
export function render(stored: StoredCertificate, clock: Clock) {
  return {
    id: stored.id,
    zone_id: stored.zone_id,
    hosts: stored.hosts,
    issuer: stored.issuer,
    signature: stored.signature,
    bundle_method: stored.bundle_method,
    priority: stored.priority,
    status: Date.parse(stored.expires_on) <= clock.now() ? ('expired' as const) : ('active' as const),
    expires_on: stored.expires_on,
    uploaded_on: stored.uploaded_on,
    modified_on: stored.modified_on,
    policy_restrictions: '',
  };
}
