import { z } from 'zod';
import type { TailEvent, TailRequestEvent } from '../../workerd/index.ts';

const OUTCOMES = ['ok', 'canceled', 'exception', 'exceededCpu', 'exceededMemory', 'unknown'] as const;

/**
 * The filters `wrangler tail` sends in the body of POST .../tails (cloudflare/workers-sdk packages/wrangler/src/tail/filters.ts): every
 * filter must match (AND); a list matches when any of its entries does.
 */
const filterSchema = z.union([
  z.strictObject({ sampling_rate: z.number().gt(0).lte(1) }),
  z.strictObject({ outcome: z.array(z.enum(OUTCOMES)).min(1) }),
  z.strictObject({ method: z.array(z.string().min(1).max(32)).min(1) }),
  z.strictObject({
    header: z.strictObject({ key: z.string().min(1).max(256), query: z.string().max(4096).optional() }),
  }),
  z.strictObject({ client_ip: z.array(z.string().min(1).max(64)).min(1) }),
  z.strictObject({ query: z.string().min(1).max(4096) }),
  z.strictObject({ scriptVersion: z.string().min(1).max(64) }),
]);

export const tailCreateBodySchema = z.strictObject({ filters: z.array(filterSchema).max(20).default([]) });
export type TailFilter = z.infer<typeof filterSchema>;

/** `client_ip: ["self"]` means the address that opened the session, as on Cloudflare. */
export function resolveSelf(filters: TailFilter[], selfIp: string | undefined): TailFilter[] {
  return filters.map((f) =>
    'client_ip' in f ? { client_ip: f.client_ip.map((ip) => (ip === 'self' && selfIp ? selfIp : ip)) } : f,
  );
}

/**
 * The client's address as far as a traced request shows it: one a proxy in front reported (CF-Connecting-IP,
 * as Ledge's load balancer sets it, X-Real-IP or the first X-Forwarded-For hop), else workerd's peer address,
 * which the events carry in `cf.clientIp` (`ip:port`) while a session filters by address (isolate/trace.ts).
 */
function clientIp(request: TailRequestEvent['request']): string | undefined {
  const headers = request.headers;
  const forwarded = headers['x-forwarded-for']?.split(',')[0]?.trim();
  return headers['cf-connecting-ip'] ?? headers['x-real-ip'] ?? (forwarded || peerIp(request.cf.clientIp));
}

/** `203.0.113.7:51234` -> `203.0.113.7`, `[::1]:51234` -> `::1`. */
function peerIp(peer: unknown): string | undefined {
  if (typeof peer !== 'string') return undefined;
  const bracketed = /^\[([^\]]+)\]:\d+$/.exec(peer);
  if (bracketed) return bracketed[1];
  const colon = peer.lastIndexOf(':');
  return colon > 0 && peer.indexOf(':') === colon ? peer.slice(0, colon) : peer || undefined;
}

/** What `--search` matches: console output and exceptions (Cloudflare: "a text match in console.log messages"). */
function searchableText(event: TailEvent): string {
  const logs = event.logs.map((l) => l.message.map((m) => (typeof m === 'string' ? m : JSON.stringify(m))).join(' '));
  const exceptions = event.exceptions.map((e) => `${e.name}: ${e.message}`);
  return [...logs, ...exceptions].join('\n');
}

export function matchesFilters(event: TailEvent, filters: TailFilter[], random: () => number = Math.random): boolean {
  // A Cron Trigger run has no request: filters on the request's method, headers or client never match it.
  const request = 'request' in event.event ? event.event.request : undefined;
  for (const filter of filters) {
    if ('sampling_rate' in filter) {
      if (random() >= filter.sampling_rate) return false;
    } else if ('outcome' in filter) {
      if (!(filter.outcome as string[]).includes(event.outcome)) return false;
    } else if ('method' in filter) {
      if (!request || !filter.method.some((m) => m.toUpperCase() === request.method.toUpperCase())) return false;
    } else if ('header' in filter) {
      const value = request?.headers[filter.header.key.toLowerCase()];
      if (value === undefined) return false;
      if (filter.header.query !== undefined && value.trim() !== filter.header.query) return false;
    } else if ('client_ip' in filter) {
      const ip = request && clientIp(request);
      if (!ip || !filter.client_ip.includes(ip)) return false;
    } else if ('query' in filter) {
      if (!searchableText(event).includes(filter.query)) return false;
    }
    // scriptVersion: every event comes from the deployed version, the only one that serves requests.
  }
  return true;
}

/** The sampling filters alone (the others need the event). */
export function passesSampling(filters: TailFilter[], random: () => number = Math.random): boolean {
  return filters.every((f) => !('sampling_rate' in f) || random() < f.sampling_rate);
}
