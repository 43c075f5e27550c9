// Writes docs/configuration.md from the settings schema (src/server/settings/schema.ts):
//   npx node scripts/configuration-doc.ts
// test/server/configuration-doc.test.ts fails when the file and the schema differ.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configurationDoc } from '../src/server/settings/index.ts';

export const CONFIGURATION_DOC = join(import.meta.dirname, '../docs/configuration.md');

if (import.meta.main) {
  writeFileSync(CONFIGURATION_DOC, configurationDoc());
  process.stdout.write(`wrote ${CONFIGURATION_DOC}\n`);
}
