import { compareSpecificity, hostMatches, parseRoutePattern, pathMatches, type RoutePattern } from './pattern.ts';

/** The script a request is for. One object per script in a table, so the data plane can keep things on it. */
export interface WorkerRouteTarget {
  readonly accountId: string;
  readonly script: string;
}

/** A stored route: a null script is a route "without a Worker", which negates the less specific ones. */
export interface RouteEntry {
  pattern: string;
  accountId: string;
  script: string | null;
}

/** A stored custom domain: every path of `hostname` goes to the script. */
export interface DomainEntry {
  hostname: string;
  accountId: string;
  script: string;
}

interface CompiledRoute {
  pattern: RoutePattern;
  target: WorkerRouteTarget | undefined;
}

/**
 * Host + path -> script, for the traffic port's listeners (plain and TLS alike). Routes first, by Cloudflare's
 * matching rules (the most specific pattern that matches wins, see `compareSpecificity`; a matching route
 * without a script sends the request past Workers routes), then custom domains (every path of their hostname):
 * Cloudflare runs a route before a Custom Domain on the same hostname. Immutable: a change builds a new table.
 */
export class WorkerRouteTable {
  static readonly EMPTY = new WorkerRouteTable([], []);
  /** Routes whose host has no wildcard, by host, most specific first. */
  readonly #exact = new Map<string, CompiledRoute[]>();
  /** Routes with a wildcard host, most specific first. */
  readonly #wildcard: CompiledRoute[] = [];
  readonly #domains = new Map<string, WorkerRouteTarget>();

  constructor(routes: readonly RouteEntry[], domains: readonly DomainEntry[]) {
    const targets = new Map<string, WorkerRouteTarget>();
    const targetOf = (accountId: string, script: string): WorkerRouteTarget => {
      const key = `${accountId}/${script}`;
      let target = targets.get(key);
      if (!target) {
        target = { accountId, script };
        targets.set(key, target);
      }
      return target;
    };
    for (const route of routes) {
      const pattern = parseRoutePattern(route.pattern);
      // Stored patterns were validated; one that no longer parses serves nothing rather than stopping the table.
      if ('problem' in pattern) continue;
      const compiled = { pattern, target: route.script === null ? undefined : targetOf(route.accountId, route.script) };
      if (pattern.hostWildcard === 'none') {
        const list = this.#exact.get(pattern.host) ?? [];
        list.push(compiled);
        this.#exact.set(pattern.host, list);
      } else this.#wildcard.push(compiled);
    }
    for (const list of this.#exact.values()) list.sort((a, b) => compareSpecificity(a.pattern, b.pattern));
    this.#wildcard.sort((a, b) => compareSpecificity(a.pattern, b.pattern));
    for (const domain of domains) this.#domains.set(domain.hostname, targetOf(domain.accountId, domain.script));
  }

  /**
   * The hostnames this table serves by name: Custom Domains and the hosts of routes without a host wildcard (a
   * certificate can be ordered for each; wildcard hosts name no single hostname). Routes without a script too.
   */
  hostnames(): string[] {
    return [...new Set([...this.#exact.keys(), ...this.#domains.keys()])].sort();
  }

  /** Whether `hostname` is a Custom Domain (lowercase, without port or trailing dot). */
  hasDomain(hostname: string): boolean {
    return this.#domains.has(hostname);
  }

  get empty(): boolean {
    return this.#exact.size === 0 && this.#wildcard.length === 0 && this.#domains.size === 0;
  }

  /**
   * The script that serves a request, if any. `hostname`: lowercase, without port or trailing dot;
   * `target`: the request target as sent (origin form, or absolute form whose path is read); `https`: the
   * request came over TLS (a pattern naming a scheme matches only it).
   */
  match(hostname: string, target: string, https: boolean): WorkerRouteTarget | undefined {
    if (this.empty) return undefined;
    const path = pathOf(target);
    const exact = this.#exact.get(hostname);
    const routed =
      (exact && firstMatch(exact, hostname, path, https)) ?? firstMatch(this.#wildcard, hostname, path, https);
    if (routed) return routed.target ?? this.#domains.get(hostname);
    return this.#domains.get(hostname);
  }
}

function firstMatch(
  routes: readonly CompiledRoute[],
  hostname: string,
  path: string,
  https: boolean,
): CompiledRoute | undefined {
  for (const route of routes) {
    const { pattern } = route;
    if (pattern.scheme !== undefined && (pattern.scheme === 'https') !== https) continue;
    if (hostMatches(pattern, hostname) && pathMatches(pattern, path)) return route;
  }
  return undefined;
}

/** The path and query of a request target (`http://host/p?q` -> `/p?q`; `*` and the like match no path). */
function pathOf(target: string): string {
  if (target.startsWith('/')) return target;
  const scheme = target.indexOf('://');
  if (scheme < 0) return '';
  const slash = target.indexOf('/', scheme + 3);
  return slash < 0 ? '/' : target.slice(slash);
}
