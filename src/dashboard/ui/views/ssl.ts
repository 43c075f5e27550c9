import { enc, get } from '../api.ts';
import { replace } from '../dom.ts';
import { renderZoneSsl, type CertificatePack, type CustomCertificate } from './ssl.render.ts';

/** A zone's SSL/TLS page: loaded through the API; ssl.render.ts draws it. */
export async function zoneSsl(main: HTMLElement, zoneId: string): Promise<void> {
  const base = `/zones/${enc(zoneId)}`;
  const [zone, packs, custom, alwaysUseHttps, minTlsVersion] = await Promise.all([
    get<{ id: string; name: string }>(base),
    get<CertificatePack[]>(`${base}/ssl/certificate_packs`),
    get<CustomCertificate[]>(`${base}/custom_certificates`),
    get<{ value: string }>(`${base}/settings/always_use_https`),
    get<{ value: string }>(`${base}/settings/min_tls_version`),
  ]);
  replace(
    main,
    renderZoneSsl({
      zone,
      packs,
      custom,
      settings: { alwaysUseHttps: alwaysUseHttps.value, minTlsVersion: minTlsVersion.value },
    }),
  );
}
