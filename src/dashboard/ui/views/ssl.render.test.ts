// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { renderZoneSsl, type ZoneSslData } from './ssl.render.ts';
import { cellTexts } from './render-testing.ts';

const at = '2026-11-28T14:00:00.000Z';
const data = (over: Partial<ZoneSslData> = {}): ZoneSslData => ({
  zone: { id: 'z1', name: 'shop.test' },
  packs: [],
  custom: [],
  settings: { alwaysUseHttps: 'off', minTlsVersion: '1.2' },
  ...over,
});

describe("a zone's SSL/TLS page, drawn from its data", () => {
  it('shows a failing ACME order with the CA error (as text), its failures and the next attempt', () => {
    const error = '<img src=x onerror=alert(1)> urn:ietf:params:acme:error:connection: refused';
    const view = renderZoneSsl(
      data({
        packs: [
          {
            id: 'app.shop.test',
            hosts: ['app.shop.test'],
            status: 'pending_validation',
            certificates: [],
            validation_errors: [{ message: error }],
            order_status: 'failed',
            failures: 3,
            next_attempt_on: at,
          },
          {
            id: 'www.shop.test',
            hosts: ['www.shop.test'],
            status: 'active',
            certificates: [{ id: 'c1', issuer: 'Pebble Intermediate CA', expires_on: at }],
            validation_errors: [],
            order_status: 'issued',
            failures: 0,
            next_attempt_on: at,
          },
        ],
      }),
    );
    const rows = cellTexts([view.querySelectorAll('table')[1]!]);
    expect(rows[0]).toEqual(['app.shop.test', 'failing', '', '', error, '3', new Date(at).toLocaleString()]);
    expect(rows[1]!.slice(0, 3)).toEqual(['www.shop.test', 'active', 'Pebble Intermediate CA']);
    expect(rows[1]![6]).toBe('');
    expect(view.querySelector('img')).toBeNull();
    expect(view.querySelector('[role=alert]')?.textContent).toBe('1 certificate order failing: app.shop.test');
  });

  it('lists uploaded certificates and the settings, and says why a list is empty', () => {
    const view = renderZoneSsl(
      data({
        custom: [{ id: 'u1', hosts: ['shop.test', '*.shop.test'], issuer: 'My CA', expires_on: at, status: 'active' }],
        settings: { alwaysUseHttps: 'on', minTlsVersion: '1.3' },
      }),
    );
    expect(cellTexts([view.querySelectorAll('table')[0]!])).toEqual([
      ['shop.test, *.shop.test', 'My CA', new Date(at).toLocaleString(), 'active'],
    ]);
    expect(view.querySelector('dl')?.textContent).toBe('Always Use HTTPSonMinimum TLS version1.3');
    expect(view.querySelector('[role=alert]')).toBeNull();
    expect(cellTexts([view.querySelectorAll('table')[1]!])[0]![0]).toMatch(/^No ACME certificates/);
  });
});
