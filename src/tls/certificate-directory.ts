import type { SecureVersion } from 'node:tls';
import type { TlsChoice, TlsCredentials, TlsTermination } from '../proxy/index.ts';
import type { ClientHello } from '../proxy/index.ts';
import type { Clock } from '../shared/clock.ts';
import type { SecretBox } from '../shared/crypto.ts';
import type { Logger } from '../shared/logger.ts';
import type { CertificateStore, StoredCertificate } from './certificate-store.ts';
import { sealAad } from './custom-certificates.ts';
import type { ChallengeStore } from './acme/challenge-store.ts';
import { DEFAULT_POLICY, type ZoneTlsPolicy } from './zone-tls-settings.ts';

const VERSIONS: Record<ZoneTlsPolicy['minTlsVersion'], SecureVersion> = {
  '1.0': 'TLSv1',
  '1.1': 'TLSv1.1',
  '1.2': 'TLSv1.2',
  '1.3': 'TLSv1.3',
};

export interface DirectoryDeps {
  certificates: CertificateStore;
  challenges: ChallengeStore;
  policies: () => Promise<Map<string, ZoneTlsPolicy>>;
  box: SecretBox;
  clock: Clock;
  logger: Logger;
}

interface Served {
  certificate: StoredCertificate;
  /** The same object while the certificate is unchanged (the TLS port keeps its OpenSSL context by it). */
  credentials: TlsCredentials;
}

/**
 * What the TLS port serves, in memory (no database read during a handshake): every certificate by hostname
 * (uploaded ones before ACME's, then the one that expires last; `*.zone` names cover one label), the zones'
 * TLS policies, and the pending TLS-ALPN-01 challenges and HTTP-01 tokens. Reloaded after a change on this
 * node, on another node's notice, and every 30 s (the caller's timer).
 */
export class CertificateDirectory implements TlsTermination {
  #byHost = new Map<string, Served[]>();
  #policies = new Map<string, ZoneTlsPolicy>();
  #alpnChallenges = new Map<string, TlsCredentials>();
  #httpTokens = new Map<string, string>();
  #reloading: Promise<void> | undefined;
  #again = false;

  readonly deps: DirectoryDeps;

  constructor(deps: DirectoryDeps) {
    this.deps = deps;
  }

  /** Reloads everything; calls made while a reload runs share one more reload after it. */
  reload(): Promise<void> {
    if (this.#reloading) {
      this.#again = true;
      return this.#reloading;
    }
    this.#reloading = this.#load().finally(() => {
      this.#reloading = undefined;
      if (this.#again) {
        this.#again = false;
        void this.reload();
      }
    });
    return this.#reloading;
  }

  async #load(): Promise<void> {
    const [certificates, policies, challenges] = await Promise.all([
      this.deps.certificates.all(),
      this.deps.policies(),
      this.deps.challenges.all(),
    ]);
    const byHost = new Map<string, Served[]>();
    for (const certificate of certificates) {
      let key: string;
      try {
        key = this.deps.box.open(certificate.sealed_key, sealAad(certificate.id));
      } catch {
        this.deps.logger.error('a certificate key does not open with this secret key', { certificate: certificate.id });
        continue;
      }
      const previous = this.#findServed(certificate);
      const served: Served =
        previous && previous.certificate.modified_on === certificate.modified_on
          ? previous
          : { certificate, credentials: { cert: certificate.certificate, key } };
      for (const host of certificate.hosts) byHost.set(host, [...(byHost.get(host) ?? []), served]);
    }
    for (const list of byHost.values()) list.sort(preference);
    const alpn = new Map<string, TlsCredentials>();
    const tokens = new Map<string, string>();
    for (const challenge of challenges) {
      if (challenge.kind === 'http-01')
        tokens.set(`${challenge.hostname} ${challenge.token}`, challenge.keyAuthorization);
      else if (challenge.material) {
        const kept = this.#alpnChallenges.get(challenge.hostname);
        const { cert, key } = challenge.material;
        alpn.set(challenge.hostname, kept?.cert === cert && kept.key === key ? kept : { cert, key });
      }
    }
    this.#byHost = byHost;
    this.#policies = policies;
    this.#alpnChallenges = alpn;
    this.#httpTokens = tokens;
  }

  #findServed(certificate: StoredCertificate): Served | undefined {
    for (const host of certificate.hosts) {
      const found = this.#byHost.get(host)?.find((served) => served.certificate.id === certificate.id);
      if (found) return found;
    }
    return undefined;
  }

  /** The certificate served for a hostname (undefined: none that is unexpired). */
  certificateFor(hostname: string): StoredCertificate | undefined {
    return this.#served(hostname)?.certificate;
  }

  #served(hostname: string): Served | undefined {
    const now = this.deps.clock.now();
    const usable = (list: Served[] | undefined) =>
      list?.find((served) => Date.parse(served.certificate.expires_on) > now);
    const exact = usable(this.#byHost.get(hostname));
    if (exact) return exact;
    const dot = hostname.indexOf('.');
    return dot > 0 ? usable(this.#byHost.get(`*.${hostname.slice(dot + 1)}`)) : undefined;
  }

  /** The TLS policy of the zone a hostname is in (the zone's own name or the nearest one above it). */
  policyFor(hostname: string): ZoneTlsPolicy {
    for (let name = hostname; ;) {
      const policy = this.#policies.get(name);
      if (policy) return policy;
      const dot = name.indexOf('.');
      if (dot < 0) return DEFAULT_POLICY;
      name = name.slice(dot + 1);
    }
  }

  /** The key authorization of a pending HTTP-01 challenge (served at /.well-known/acme-challenge/<token>). */
  httpChallenge(hostname: string, token: string): string | undefined {
    return this.#httpTokens.get(`${hostname} ${token}`);
  }

  hasHttpChallenges(hostname: string): boolean {
    for (const key of this.#httpTokens.keys()) if (key.startsWith(`${hostname} `)) return true;
    return false;
  }

  // TlsTermination: what the TLS port asks per handshake.
  choose(hello: ClientHello): TlsChoice | undefined {
    const name = hello.serverName;
    if (!name) return undefined;
    if (hello.protocols.includes('acme-tls/1')) {
      const credentials = this.#alpnChallenges.get(name);
      return credentials ? { kind: 'acme', minVersion: 'TLSv1.2', credentials } : undefined;
    }
    const served = this.#served(name);
    if (!served) return undefined;
    return {
      kind: 'site',
      minVersion: VERSIONS[this.policyFor(name).minTlsVersion],
      credentials: served.credentials,
    };
  }
}

/** Uploaded certificates first (as Cloudflare prefers custom over universal ones), then the longest-lived. */
function preference(a: Served, b: Served): number {
  if (a.certificate.source !== b.certificate.source) return a.certificate.source === 'custom' ? -1 : 1;
  return Date.parse(b.certificate.expires_on) - Date.parse(a.certificate.expires_on);
}
