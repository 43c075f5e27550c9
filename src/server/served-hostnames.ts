import type { SqlExecutor } from '../db/index.ts';
import type { ServedHostname } from '../tls/index.ts';

/**
 * Every hostname the traffic ports serve on a zone (load balancers, public buckets' custom domains, Workers
 * Custom Domains), with the zone, for the certificates src/tls/ orders. Read here, at the composition root,
 * so tls imports none of them. Workers routes are patterns (often wildcards), not hostnames: as on
 * Cloudflare, a route's hostname gets its certificate another way (here an uploaded one).
 */
export function servedHostnames(db: SqlExecutor): () => Promise<ServedHostname[]> {
  return () =>
    db.all<ServedHostname>(
      `SELECT lb.name AS "hostname", z.id AS "zoneId", z.name AS "zoneName"
         FROM lb_load_balancers lb JOIN zones z ON z.id = lb.zone_id
       UNION
       SELECT d.domain AS "hostname", z.id AS "zoneId", z.name AS "zoneName"
         FROM r2_custom_domains d JOIN zones z ON z.id = d.zone_id
        WHERE d.enabled = 1
       UNION
       SELECT w.hostname AS "hostname", z.id AS "zoneId", z.name AS "zoneName"
         FROM worker_domains w JOIN zones z ON z.id = w.zone_id
       ORDER BY 1`,
    );
}
