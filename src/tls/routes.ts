import { Hono } from 'hono';
import { z } from 'zod';
import { readJson } from '../api-kit/body.ts';
import type { AppEnv } from '../api-kit/context.ts';
import { ok } from '../api-kit/respond.ts';
import type { CertificatePacks } from './certificate-packs.ts';
import type { CustomCertificateService } from './custom-certificates.ts';
import { CERTIFICATE_INVALID_CODE } from './pem.ts';
import {
  TLS_ZONE_SETTINGS,
  unknownSetting,
  type TlsZoneSettingName,
  type ZoneTlsSettings,
} from './zone-tls-settings.ts';

/**
 * `/zones/{zone_id}/custom_certificates` (CRUD), `/zones/{zone_id}/settings/{always_use_https,min_tls_version}`
 * and `/zones/{zone_id}/ssl/certificate_packs` (the ACME certificates and their errors). HTTP only.
 */
export function tlsRoutes(deps: {
  custom: CustomCertificateService;
  settings: ZoneTlsSettings;
  packs: CertificatePacks;
}): Hono<AppEnv> {
  const { custom, settings, packs } = deps;
  const app = new Hono<AppEnv>();
  const body = (c: Parameters<typeof readJson>[0]) => readJson(c, z.unknown(), { code: CERTIFICATE_INVALID_CODE });

  app.post('/zones/:zone_id/custom_certificates', async (c) =>
    ok(c, await custom.create(c.get('principal'), c.req.param('zone_id'), await body(c))),
  );
  app.get('/zones/:zone_id/custom_certificates', async (c) =>
    ok(c, await custom.list(c.get('principal'), c.req.param('zone_id'))),
  );
  app.get('/zones/:zone_id/custom_certificates/:id', async (c) =>
    ok(c, await custom.get(c.get('principal'), c.req.param('zone_id'), c.req.param('id'))),
  );
  app.patch('/zones/:zone_id/custom_certificates/:id', async (c) =>
    ok(c, await custom.edit(c.get('principal'), c.req.param('zone_id'), c.req.param('id'), await body(c))),
  );
  app.delete('/zones/:zone_id/custom_certificates/:id', async (c) =>
    ok(c, await custom.delete(c.get('principal'), c.req.param('zone_id'), c.req.param('id'))),
  );

  const settingName = (name: string): TlsZoneSettingName => {
    if (!(name in TLS_ZONE_SETTINGS)) throw unknownSetting(name);
    return name as TlsZoneSettingName;
  };
  for (const name of Object.keys(TLS_ZONE_SETTINGS)) {
    app.get(`/zones/:zone_id/settings/${name}`, async (c) =>
      ok(c, await settings.get(c.get('principal'), c.req.param('zone_id'), settingName(name))),
    );
    app.patch(`/zones/:zone_id/settings/${name}`, async (c) =>
      ok(c, await settings.edit(c.get('principal'), c.req.param('zone_id'), settingName(name), await body(c))),
    );
  }

  app.get('/zones/:zone_id/ssl/certificate_packs', async (c) =>
    ok(c, await packs.list(c.get('principal'), c.req.param('zone_id'))),
  );
  return app;
}
