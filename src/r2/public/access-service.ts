import type { Principal } from '../../accounts/index.ts';
import { R2Errors, type BucketRecord, type StorageService } from '../../storage/index.ts';
import { normaliseHostname, type ZoneService } from '../../zones/index.ts';
import type { CustomCreate, CustomUpdate } from './domain-schemas.ts';
import type { CustomDomainRecord, PublicDomainStore } from './domain-store.ts';
import { PublicAccessErrors } from './errors.ts';
import type { Clock } from '../../shared/clock.ts';

export interface PublicAccessDeps {
  store: PublicDomainStore;
  storage: Pick<StorageService, 'buckets'>;
  zones: Pick<ZoneService, 'resolve' | 'owningZone'>;
  /** The suffix of managed public URLs: a bucket's is `pub-<bucket id>.<suffix>` (default r2.localhost). */
  managedSuffix: string;
  /** Whether a load balancer already answers for this hostname on the traffic port. */
  hostnameTaken?: ((hostname: string) => Promise<boolean>) | undefined;
  /** The port public buckets are served on (the traffic port, known once it listens). */
  publicPort?: (() => number | undefined) | undefined;
}

/** R2's answer for the managed URL (the SDK's ManagedListResponse / ManagedUpdateResponse). */
export interface ManagedDomain {
  bucketId: string;
  domain: string;
  enabled: boolean;
  /** Ledge's addition: where a browser reaches it (plain HTTP on the traffic port). */
  url?: string;
}

/**
 * Public access to buckets, as R2 offers it: the managed public URL (R2's r2.dev, here
 * `pub-<bucket id>.<managed suffix>`) switched on or off, and custom domains in a zone of the bucket's
 * account. Either serves the bucket read-only over plain HTTP on the traffic port (public-server.ts).
 * Listeners registered with `onChange` hear every change this node makes (the host directory reloads).
 */
export class PublicAccessService {
  readonly #deps: PublicAccessDeps;
  readonly #listeners: (() => Promise<void> | void)[] = [];

  readonly #clock: Clock;

  constructor(deps: PublicAccessDeps, clock: Clock) {
    this.#clock = clock;
    this.#deps = deps;
  }

  /** `listener` runs after each change; the change's API answer waits for it (the host directory's reload). */
  onChange(listener: () => Promise<void> | void): void {
    this.#listeners.push(listener);
  }

  /** The managed public hostname of a bucket. */
  managedHostname(bucketId: string): string {
    return `pub-${bucketId}.${this.#deps.managedSuffix}`;
  }

  async managed(accountId: string, bucketName: string): Promise<ManagedDomain> {
    const bucket = await this.#bucket(accountId, bucketName);
    return this.#managedOf(bucket, await this.#deps.store.managedEnabled(bucket.id));
  }

  async setManaged(accountId: string, bucketName: string, enabled: boolean): Promise<ManagedDomain> {
    const bucket = await this.#bucket(accountId, bucketName);
    if (!(await this.#deps.store.setManaged(bucket.id, enabled))) throw R2Errors.noSuchBucket(bucketName);
    await this.#changed();
    return this.#managedOf(bucket, enabled);
  }

  async listCustom(principal: Principal, accountId: string, bucketName: string) {
    const bucket = await this.#bucket(accountId, bucketName);
    const records = await this.#deps.store.listCustom(bucket.id);
    return { domains: await Promise.all(records.map((record) => this.#render(principal, record))) };
  }

  async getCustom(principal: Principal, accountId: string, bucketName: string, domain: string) {
    const record = await this.#customOf(accountId, bucketName, domain);
    return this.#render(principal, record);
  }

  async createCustom(principal: Principal, accountId: string, bucketName: string, input: CustomCreate) {
    const bucket = await this.#bucket(accountId, bucketName);
    const { name: domain, problem } = normaliseHostname(input.domain);
    if (problem) throw PublicAccessErrors.invalidDomain(input.domain, problem);
    const suffix = this.#deps.managedSuffix;
    if (domain === suffix || domain.endsWith(`.${suffix}`))
      throw PublicAccessErrors.invalidDomain(domain, `names under ${suffix} are the managed public URLs`);
    // The zone must be one the caller may use, of this account, and the most specific zone of the name
    // (a sub-zone of another account below it owns the names under it).
    const zone = await this.#deps.zones.resolve(principal, input.zoneId).catch(() => undefined);
    if (!zone || zone.accountId !== accountId) throw PublicAccessErrors.zoneNotFound(input.zoneId);
    const owning = await this.#deps.zones.owningZone(domain);
    if (owning?.id !== zone.id) throw PublicAccessErrors.notInZone(domain, zone.name);
    if (await this.#deps.hostnameTaken?.(domain)) throw PublicAccessErrors.domainInUse(domain);
    const record: CustomDomainRecord = {
      domain,
      bucketId: bucket.id,
      zoneId: zone.id,
      enabled: input.enabled,
      minTLS: input.minTLS,
      ciphers: input.ciphers,
      createdAt: this.#clock.now(),
    };
    const outcome = await this.#deps.store.insertCustom(record);
    if (outcome === 'exists') throw PublicAccessErrors.domainTaken(domain);
    if (outcome === 'no-bucket-or-zone') throw R2Errors.noSuchBucket(bucketName);
    await this.#changed();
    return {
      domain,
      enabled: record.enabled,
      zoneId: record.zoneId,
      ...(record.minTLS ? { minTLS: record.minTLS } : {}),
      ...(record.ciphers ? { ciphers: record.ciphers } : {}),
      ...this.#urlOf(domain),
    };
  }

  async updateCustom(accountId: string, bucketName: string, domain: string, patch: CustomUpdate) {
    const bucket = await this.#bucket(accountId, bucketName);
    const name = normaliseHostname(domain).name;
    const record = await this.#deps.store.updateCustom(bucket.id, name, patch);
    if (!record) throw PublicAccessErrors.domainNotFound(domain);
    await this.#changed();
    return {
      domain: record.domain,
      enabled: record.enabled,
      ...(record.minTLS ? { minTLS: record.minTLS } : {}),
      ...(record.ciphers ? { ciphers: record.ciphers } : {}),
      ...this.#urlOf(record.domain),
    };
  }

  async deleteCustom(accountId: string, bucketName: string, domain: string): Promise<{ domain: string }> {
    const bucket = await this.#bucket(accountId, bucketName);
    const name = normaliseHostname(domain).name;
    if (!(await this.#deps.store.deleteCustom(bucket.id, name))) throw PublicAccessErrors.domainNotFound(domain);
    await this.#changed();
    return { domain: name };
  }

  /** Before a zone is deleted: its custom domains stop serving with it. */
  async removeZone(zoneId: string): Promise<void> {
    if ((await this.#deps.store.deleteZoneDomains(zoneId)) > 0) await this.#changed();
  }

  async #customOf(accountId: string, bucketName: string, domain: string): Promise<CustomDomainRecord> {
    const bucket = await this.#bucket(accountId, bucketName);
    const record = await this.#deps.store.getCustom(normaliseHostname(domain).name);
    if (!record || record.bucketId !== bucket.id) throw PublicAccessErrors.domainNotFound(domain);
    return record;
  }

  /** As R2 shows a custom domain (the SDK's CustomGetResponse); Ledge owns the name at once and has no TLS. */
  async #render(principal: Principal, record: CustomDomainRecord) {
    const zone = await this.#deps.zones.resolve(principal, record.zoneId).catch(() => undefined);
    return {
      domain: record.domain,
      enabled: record.enabled,
      status: { ownership: 'active' as const, ssl: 'unknown' as const },
      ...(record.minTLS ? { minTLS: record.minTLS } : {}),
      ...(record.ciphers ? { ciphers: record.ciphers } : {}),
      zoneId: record.zoneId,
      ...(zone ? { zoneName: zone.name } : {}),
      ...this.#urlOf(record.domain),
    };
  }

  #managedOf(bucket: BucketRecord, enabled: boolean): ManagedDomain {
    const domain = this.managedHostname(bucket.id);
    return { bucketId: bucket.id, domain, enabled, ...this.#urlOf(domain) };
  }

  /** `url`: the hostname as a URL with scheme and port (none while the traffic port is not listening). */
  #urlOf(hostname: string): { url?: string } {
    const port = this.#deps.publicPort?.();
    if (port === undefined) return {};
    return { url: port === 80 ? `http://${hostname}/` : `http://${hostname}:${port}/` };
  }

  #bucket(accountId: string, bucketName: string): Promise<BucketRecord> {
    return this.#deps.storage.buckets.require(accountId, bucketName);
  }

  async #changed(): Promise<void> {
    await Promise.all(this.#listeners.map((listener) => listener()));
  }
}
