import { SETTINGS } from './schema.ts';
import { SECTIONS, type Setting } from './setting.ts';

const ALL = Object.values(SETTINGS) as Setting<unknown>[];

/** A flag as `ledge server` declares it to commander: `--port <port>` and its help line. */
export interface FlagOption {
  flags: string;
  description: string;
}

export function flagOptions(): FlagOption[] {
  return ALL.filter((setting) => setting.flag !== undefined).map((setting) => ({
    flags: setting.kind.valueName ? `${setting.flag} <${setting.kind.valueName}>` : `${setting.flag}`,
    description: `${withoutPeriod(setting.description)} (env ${setting.env}${defaultNote(setting)})`,
  }));
}

/** The settings read from the environment only, as `ledge server --help` lists them after the flags. */
export function environmentHelp(): string {
  const envOnly = ALL.filter((setting) => setting.flag === undefined);
  const width = Math.max(...envOnly.map((setting) => setting.env.length)) + 2;
  const lines = envOnly.map(
    (setting) =>
      `  ${setting.env.padEnd(width)}${withoutPeriod(setting.description)}${range(setting)}${defaultNote(setting)}`,
  );
  return `\nEnvironment-only settings (docs/configuration.md has them all):\n${lines.join('\n')}\n`;
}

/** docs/configuration.md: every setting by section, written by scripts/configuration-doc.ts. */
export function configurationDoc(): string {
  const out = [
    '# Configuration',
    '',
    '<!-- Generated from src/server/settings/schema.ts by `node scripts/configuration-doc.ts`: edit the schema,',
    '     then run the script. test/server/configuration-doc.test.ts fails when this file and the schema differ. -->',
    '',
    '`ledge server` reads every setting below once at start. A flag wins over its environment variable, which',
    'wins over the default; an empty variable counts as unset. A bad value stops the server with one line',
    'naming the setting, and exit code 1. `ledge server --help` lists them too.',
    '',
  ];
  for (const section of SECTIONS) {
    const settings = ALL.filter((setting) => setting.section === section);
    if (settings.length === 0) continue;
    out.push(
      `## ${section}`,
      '',
      '| Flag | Environment | Values | Default | What it does |',
      '| --- | --- | --- | --- | --- |',
    );
    for (const setting of settings) {
      const cells = [
        setting.flag ? `\`${setting.flag}\`` : '',
        [setting.env, ...setting.alsoEnv].map((name) => `\`${name}\``).join(', then '),
        setting.kind.range,
        defaultCell(setting),
        setting.description,
      ];
      out.push(`| ${cells.map(cell).join(' | ')} |`);
    }
    out.push('');
  }
  return out.join('\n');
}

/** Table cell text: `|` ends a cell, and outside code spans `<x>` would be an HTML tag and `*` emphasis. */
function cell(text: string): string {
  return text
    .split('`')
    .map((part, index) => (index % 2 === 1 ? part : part.replace(/[<>*]/g, (c) => `\\${c}`)))
    .join('`')
    .replaceAll('|', '\\|');
}

function range(setting: Setting<unknown>): string {
  return setting.kind.range === 'any text' ? '' : ` (${setting.kind.range})`;
}

function defaultNote(setting: Setting<unknown>): string {
  if (setting.defaultText === undefined || setting.defaultText === '') return '';
  return setting.optional ? `; unset: ${setting.defaultText}` : `; default ${setting.defaultText}`;
}

function defaultCell(setting: Setting<unknown>): string {
  if (setting.optional) return setting.defaultText === undefined ? 'unset' : `unset: ${setting.defaultText}`;
  return setting.defaultText === '' ? 'empty' : `${setting.defaultText}`;
}

function withoutPeriod(text: string): string {
  return text.endsWith('.') ? text.slice(0, -1) : text;
}
