import { formatTime, h, table } from '../dom.ts';
import { href } from '../router.ts';
import { pageView } from '../ui-kit.ts';

/** One hostname's ACME certificate as `/zones/{id}/ssl/certificate_packs` gives it. */
export interface CertificatePack {
  id: string;
  hosts: string[];
  status: string;
  certificates: { id: string; issuer?: string; expires_on?: string }[];
  validation_errors: { message: string }[];
  order_status?: 'pending' | 'issued' | 'failed';
  failures?: number;
  next_attempt_on?: string;
}

/** An uploaded certificate as `/zones/{id}/custom_certificates` lists it (never its key). */
export interface CustomCertificate {
  id: string;
  hosts: string[];
  issuer?: string;
  expires_on?: string;
  status?: string;
}

export interface ZoneSslData {
  zone: { id: string; name: string };
  packs: CertificatePack[];
  custom: CustomCertificate[];
  /** The zone's always_use_https and min_tls_version values. */
  settings: { alwaysUseHttps: string; minTlsVersion: string };
}

/**
 * A zone's SSL/TLS page: its settings, the certificates it serves (uploaded ones first, as the TLS port
 * prefers them) and every ACME order, with the CA's last error and when it is tried again while it fails.
 */
export function renderZoneSsl(data: ZoneSslData): HTMLElement {
  const { zone, packs, custom } = data;
  const failing = packs.filter((pack) => pack.order_status === 'failed');
  return pageView(
    `SSL/TLS: ${zone.name}`,
    h('p', null, h('a', { href: href('zones') }, 'All zones')),
    h(
      'dl',
      { class: 'card' },
      h('dt', null, 'Always Use HTTPS'),
      h('dd', null, data.settings.alwaysUseHttps),
      h('dt', null, 'Minimum TLS version'),
      h('dd', null, data.settings.minTlsVersion),
    ),
    failing.length > 0
      ? h(
          'p',
          { class: 'notice error', role: 'alert' },
          `${failing.length} certificate order${failing.length === 1 ? '' : 's'} failing: ` +
            failing.map((pack) => pack.hosts.join(', ')).join('; '),
        )
      : null,
    table(
      `Uploaded certificates (${custom.length})`,
      ['Hosts', 'Issuer', 'Expires', 'Status'],
      custom.map((c) => [c.hosts.join(', '), c.issuer ?? '', formatTime(c.expires_on), c.status ?? '']),
      'No uploaded certificates: upload one with POST /zones/{zone_id}/custom_certificates.',
    ),
    table(
      `ACME certificates (${packs.length})`,
      ['Hostname', 'Status', 'Issuer', 'Expires', 'Last error', 'Failures', 'Next attempt'],
      packs.map((pack) => {
        const certificate = pack.certificates[0];
        const failed = pack.order_status === 'failed';
        return [
          pack.hosts.join(', '),
          failed ? h('strong', null, 'failing') : pack.order_status === 'pending' ? 'ordering' : pack.status,
          certificate?.issuer ?? '',
          formatTime(certificate?.expires_on),
          pack.validation_errors.map((error) => error.message).join('; '),
          String(pack.failures ?? 0),
          failed ? formatTime(pack.next_attempt_on) : '',
        ];
      }),
      'No ACME certificates: one is ordered for each hostname a route, custom domain, load balancer or public bucket serves here.',
    ),
  );
}
