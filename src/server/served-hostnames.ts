import type { SqlExecutor } from '../db/index.ts';
import type { ServedHostname } from '../tls/index.ts';

/**
 * Every hostname the traffic ports serve on a zone (load balancers, public buckets' custom domains), with
 * the zone, for the certificates src/tls/ orders. Read here, at the composition root, so tls imports
 * neither load balancing nor r2. (Workers routes and custom domains join this list when they land.)
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
       ORDER BY 1`,
    );
}
