import { z } from 'zod';
import { SETTINGS, type SettingKey } from './schema.ts';
import type { Setting } from './setting.ts';

/** Every setting's value, typed: what the schema's parse gives the server once at start. */
export type Settings = { [K in SettingKey]: ReturnType<(typeof SETTINGS)[K]['defaultValue']> };

/** `ledge server`'s flags by setting key (commander's camelCase of the flag); flags of no setting are ignored. */
export type ServerFlags = { [K in SettingKey]?: string | number | boolean | undefined };

/** A bad setting: its message is the one line the server stops with, naming the flag or variable. */
export class SettingError extends Error {
  override name = 'SettingError';
}

/**
 * The schema (zod) of the raw values, one string per setting that was given: each field turns its string
 * into the typed value or an issue, and an unset field into its default. Issue messages say `{setting}`
 * where the flag or variable the value came from goes (only parseSettings knows which).
 */
export const settingsSchema = z.object(
  Object.fromEntries(Object.entries(SETTINGS).map(([key, setting]) => [key, field(setting as Setting<unknown>)])),
) as unknown as z.ZodType<Settings, Partial<Record<SettingKey, string>>>;

function field<T>(setting: Setting<T>) {
  return z
    .string()
    .optional()
    .transform((raw, ctx): T => {
      if (raw === undefined) return setting.defaultValue();
      const parsed = setting.kind.parse(raw);
      if ('value' in parsed) return parsed.value;
      // A secret's value is never repeated, not even a wrong one (it may be a real key set in the wrong place).
      const shown = setting.secret ? '(hidden)' : raw;
      const message =
        'message' in parsed
          ? parsed.message
          : setting.label === undefined
            ? `invalid {setting}: ${shown} (use ${parsed.range})`
            : `invalid ${setting.label}: ${shown} (use ${parsed.range}), from {setting}`;
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    });
}

/**
 * Parses every setting once: a flag wins over its environment variable, which wins over the default; an
 * empty value (`FOO=`, as shells and CI files often leave them) is unset. Throws a SettingError naming
 * the first bad setting.
 */
export function parseSettings(flags: ServerFlags, env: NodeJS.ProcessEnv): Settings {
  const raw: Partial<Record<SettingKey, string>> = {};
  const source: Partial<Record<SettingKey, string>> = {};
  for (const key of Object.keys(SETTINGS) as SettingKey[]) {
    const setting: Setting<unknown> = SETTINGS[key];
    const flag = setting.flag === undefined ? undefined : given(flags[key]);
    if (flag !== undefined && setting.flag !== undefined) {
      raw[key] = flag;
      source[key] = setting.flag;
      continue;
    }
    for (const name of [setting.env, ...setting.alsoEnv]) {
      const value = given(env[name]);
      if (value === undefined) continue;
      raw[key] = value;
      source[key] = name;
      break;
    }
  }
  const result = settingsSchema.safeParse(raw);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const key = issue?.path[0] as SettingKey | undefined;
  const name = (key && source[key]) ?? 'a setting';
  throw new SettingError((issue?.message ?? 'invalid settings').replaceAll('{setting}', name));
}

function given(value: string | number | boolean | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  return String(value);
}
