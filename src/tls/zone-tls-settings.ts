import { z } from 'zod';
import type { Principal } from '../accounts/index.ts';
import { parseWith } from '../api-kit/body.ts';
import type { SqlExecutor } from '../db/index.ts';
import type { Clock } from '../shared/clock.ts';
import { LedgeError } from '../shared/errors.ts';
import { isoNow } from '../shared/time.ts';
import type { ZoneResolver } from './custom-certificates.ts';

/** The zone settings this platform honours on the traffic ports, with their defaults. */
export const TLS_ZONE_SETTINGS = {
  always_use_https: { values: ['on', 'off'], default: 'off' },
  // Cloudflare's default is 1.0; here it is 1.2 (TLS 1.0 and 1.1 are refused by OpenSSL's defaults anyway).
  min_tls_version: { values: ['1.0', '1.1', '1.2', '1.3'], default: '1.2' },
} as const;

export type TlsZoneSettingName = keyof typeof TLS_ZONE_SETTINGS;

/** One zone's TLS settings, as the traffic ports read them from memory. */
export interface ZoneTlsPolicy {
  alwaysUseHttps: boolean;
  minTlsVersion: (typeof TLS_ZONE_SETTINGS)['min_tls_version']['values'][number];
}

export const DEFAULT_POLICY: ZoneTlsPolicy = { alwaysUseHttps: false, minTlsVersion: '1.2' };

const SETTING_CODE = 1007;

/**
 * `/zones/{zone_id}/settings/always_use_https` and `/min_tls_version` (GET and PATCH `{ value }`, answered
 * as the SDK's setting objects). Stored per zone in `tls_zone_settings`; a setting never written answers its
 * default. `changed` runs after a write (the traffic ports' in-memory policies reload).
 */
export class ZoneTlsSettings {
  readonly #db: SqlExecutor;
  readonly #zones: ZoneResolver;
  readonly #clock: Clock;
  readonly #changed: () => Promise<void>;

  constructor(deps: { db: SqlExecutor; zones: ZoneResolver; clock: Clock; changed: () => Promise<void> }) {
    this.#db = deps.db;
    this.#zones = deps.zones;
    this.#clock = deps.clock;
    this.#changed = deps.changed;
  }

  async get(principal: Principal, zoneId: string, name: TlsZoneSettingName) {
    const zone = await this.#zones(principal, zoneId);
    const row = await this.#db.get<{ value: string; modified_on: string }>(
      'SELECT value, modified_on FROM tls_zone_settings WHERE zone_id = ? AND name = ?',
      [zone.id, name],
    );
    return render(name, row?.value ?? TLS_ZONE_SETTINGS[name].default, row?.modified_on ?? null);
  }

  async edit(principal: Principal, zoneId: string, name: TlsZoneSettingName, body: unknown) {
    const zone = await this.#zones(principal, zoneId);
    const values = TLS_ZONE_SETTINGS[name].values as unknown as [string, ...string[]];
    const schema = z.object({
      value: z.enum(values, { error: `value must be one of ${values.map((v) => `"${v}"`).join(', ')}` }),
    });
    const { value } = parseWith(schema, body, SETTING_CODE);
    const now = isoNow(this.#clock);
    await this.#db.run('DELETE FROM tls_zone_settings WHERE zone_id = ? AND name = ?', [zone.id, name]);
    await this.#db.run('INSERT INTO tls_zone_settings (zone_id, name, value, modified_on) VALUES (?, ?, ?, ?)', [
      zone.id,
      name,
      value,
      now,
    ]);
    await this.#changed();
    return render(name, value, now);
  }

  /** Every zone's policy that differs from the default, by zone name (the traffic ports' memory). */
  async policies(): Promise<Map<string, ZoneTlsPolicy>> {
    const rows = await this.#db.all<{ zone: string; name: string; value: string }>(
      'SELECT z.name AS zone, s.name, s.value FROM tls_zone_settings s JOIN zones z ON z.id = s.zone_id',
    );
    const policies = new Map<string, ZoneTlsPolicy>();
    for (const row of rows) {
      const policy = policies.get(row.zone) ?? { ...DEFAULT_POLICY };
      if (row.name === 'always_use_https') policy.alwaysUseHttps = row.value === 'on';
      if (row.name === 'min_tls_version') policy.minTlsVersion = row.value as ZoneTlsPolicy['minTlsVersion'];
      policies.set(row.zone, policy);
    }
    return policies;
  }
}

export function unknownSetting(name: string): LedgeError {
  return new LedgeError(404, SETTING_CODE, `Unknown zone setting ${name.slice(0, 64)}.`);
}

function render(name: TlsZoneSettingName, value: string, modifiedOn: string | null) {
  return { id: name, value, editable: true, modified_on: modifiedOn };
}
