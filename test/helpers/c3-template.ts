import { cpSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, tempDir } from './ledge.ts';

const TEMPLATES = join(REPO_ROOT, 'node_modules/create-cloudflare/templates');

/** A create-cloudflare template as `npm create cloudflare` writes it: placeholders filled, dot-files named. */
export function fromTemplate(template: string, name: string): string {
  const project = tempDir(`c3-${name}-`);
  cpSync(join(TEMPLATES, template), project, { recursive: true });
  for (const entry of readdirSync(project, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    if (entry.name.startsWith('__dot__')) renameSync(path, join(entry.parentPath, entry.name.replace('__dot__', '.')));
  }
  const config = join(project, 'wrangler.jsonc');
  writeFileSync(
    config,
    readFileSync(config, 'utf8').replaceAll('<WORKER_NAME>', name).replace('<COMPATIBILITY_DATE>', '2025-06-01'),
  );
  return project;
}
