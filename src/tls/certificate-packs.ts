import type { Principal } from '../accounts/index.ts';
import type { OrderStore } from './acme/order-store.ts';
import type { CertificateStore } from './certificate-store.ts';
import type { ZoneResolver } from './custom-certificates.ts';

/**
 * `/zones/{zone_id}/ssl/certificate_packs`: one pack per hostname Ledge orders a certificate for (ACME),
 * with its certificate once issued and the last error while an order fails (`validation_errors`, retried
 * with backoff; `next_attempt_on` says when).
 */
export class CertificatePacks {
  readonly #zones: ZoneResolver;
  readonly #orders: OrderStore;
  readonly #certificates: CertificateStore;

  constructor(deps: { zones: ZoneResolver; orders: OrderStore; certificates: CertificateStore }) {
    this.#zones = deps.zones;
    this.#orders = deps.orders;
    this.#certificates = deps.certificates;
  }

  async list(principal: Principal, zoneId: string) {
    const zone = await this.#zones(principal, zoneId);
    const certificates = new Map((await this.#certificates.listByZone(zone.id, 'acme')).map((c) => [c.id, c]));
    return (await this.#orders.listByZone(zone.id)).map((order) => {
      const certificate = order.certificate_id ? certificates.get(order.certificate_id) : undefined;
      return {
        id: order.hostname,
        type: 'advanced' as const,
        hosts: [order.hostname],
        status: certificate ? ('active' as const) : ('pending_validation' as const),
        validation_method: 'http' as const,
        primary_certificate: certificate?.id,
        certificates: certificate
          ? [
              {
                id: certificate.id,
                hosts: certificate.hosts,
                status: 'active',
                issuer: certificate.issuer,
                expires_on: certificate.expires_on,
                modified_on: certificate.modified_on,
                bundle_method: certificate.bundle_method,
                zone_id: zone.id,
              },
            ]
          : [],
        validation_errors: order.last_error ? [{ message: order.last_error }] : [],
        order_status: order.status,
        failures: order.failures,
        next_attempt_on: order.next_attempt_on,
        modified_on: order.modified_on,
      };
    });
  }
}
