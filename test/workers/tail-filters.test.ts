import { describe, expect, it } from 'vitest';
import { matchesFilters } from '../../src/workers/tail/filters.ts';
import type { TailEvent } from '../../src/workerd/tail-traces.ts';

function event(headers: Record<string, string>, cf: Record<string, unknown> = {}): TailEvent {
  return {
    outcome: 'ok',
    scriptName: 's',
    exceptions: [],
    logs: [],
    eventTimestamp: 0,
    event: { request: { url: 'http://s.example/', method: 'GET', headers, cf } },
    wallTime: 0,
    diagnosticsChannelEvents: [],
    truncated: false,
    executionModel: 'stateless',
  };
}

describe('tail filters: client_ip', () => {
  const only = (ip: string) => [{ client_ip: [ip] }];

  it("takes a proxy's report over workerd's peer address", () => {
    const proxied = event({ 'cf-connecting-ip': '203.0.113.7' }, { clientIp: '127.0.0.1:5000' });
    expect(matchesFilters(proxied, only('203.0.113.7'))).toBe(true);
    expect(matchesFilters(proxied, only('127.0.0.1'))).toBe(false);
  });

  it('reads the peer address without its port, IPv4 and bracketed IPv6', () => {
    expect(matchesFilters(event({}, { clientIp: '198.51.100.9:61000' }), only('198.51.100.9'))).toBe(true);
    expect(matchesFilters(event({}, { clientIp: '[2001:db8::1]:61000' }), only('2001:db8::1'))).toBe(true);
    expect(matchesFilters(event({}, { clientIp: '[::1]:443' }), only('::1'))).toBe(true);
  });

  it('matches nothing when no address is known, and ignores a malformed peer value', () => {
    expect(matchesFilters(event({}), only('127.0.0.1'))).toBe(false);
    expect(matchesFilters(event({}, { clientIp: 7 }), only('7'))).toBe(false);
    expect(matchesFilters(event({}, { clientIp: '' }), only(''))).toBe(false);
  });
});
