import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIGURATION_DOC } from '../../scripts/configuration-doc.ts';
import { configurationDoc, SETTINGS } from '../../src/server/settings/index.ts';

describe('docs/configuration.md', () => {
  it('is what the settings schema writes (run `npx node scripts/configuration-doc.ts` after changing it)', () => {
    expect(readFileSync(CONFIGURATION_DOC, 'utf8')).toBe(configurationDoc());
  });

  it('names every setting', () => {
    const doc = readFileSync(CONFIGURATION_DOC, 'utf8');
    for (const setting of Object.values(SETTINGS)) {
      expect(doc).toContain(`\`${setting.env}\``);
      if (setting.flag) expect(doc).toContain(`\`${setting.flag}\``);
    }
  });
});
