import { describe, expect, it } from 'vitest';
import { LoadedBefore } from './loaded-before.ts';
import type { ScriptToRun } from './script.ts';

function candidate(versionId: string, directory: string, source = 'export default {};'): ScriptToRun {
  return {
    script: { account_id: 'a'.repeat(32), name: 'site', workers_dev: true },
    version: {
      id: versionId,
      main_module: 'index.js',
      modules: [{ name: 'index.js', type: 'esModule', content: Buffer.from(source).toString('base64') }],
      bindings: [],
      compatibility_date: '2025-06-01',
      compatibility_flags: [],
      cpu_ms: null,
    },
    secrets: [{ name: 'TOKEN', text: 'one' }],
    subdomain: 'sub',
    scheduled: false,
    assets: { directory, config: '{"html_handling":"auto-trailing-slash"}' },
  };
}

describe('LoadedBefore: upload checks that passed', () => {
  it('knows a version whose config differs only by its id and assets directory', () => {
    const loaded = new LoadedBefore();
    loaded.add(candidate('v1', '/assets/v1'));
    const next = candidate('v2', '/assets/v2');
    // What the runtime does not read differs too: the records' timestamps.
    const record = {
      ...next,
      script: { ...next.script, modified_on: 'later' },
      version: { ...next.version, created_on: 'now' },
    };
    expect(loaded.has(record)).toBe(true);
  });

  it('checks again when the code, a secret or the assets config changes', () => {
    const loaded = new LoadedBefore();
    const first = candidate('v1', '/assets/v1');
    loaded.add(first);
    expect(loaded.has(candidate('v2', '/assets/v2', 'export default { fetch() {} };'))).toBe(false);
    expect(loaded.has({ ...first, secrets: [{ name: 'TOKEN', text: 'two' }] })).toBe(false);
    expect(loaded.has({ ...first, assets: { directory: '/assets/v1', config: '{}' } })).toBe(false);
    expect(loaded.has({ ...first, script: { ...first.script, account_id: 'b'.repeat(32) } })).toBe(false);
  });

  it('forgets the oldest pass past 256', () => {
    const loaded = new LoadedBefore();
    for (let i = 0; i <= 256; i++) loaded.add(candidate(`v${i}`, '/d', `export default { n: ${i} };`));
    expect(loaded.has(candidate('x', '/d', 'export default { n: 0 };'))).toBe(false);
    expect(loaded.has(candidate('x', '/d', 'export default { n: 1 };'))).toBe(true);
    expect(loaded.has(candidate('x', '/d', 'export default { n: 256 };'))).toBe(true);
  });
});
