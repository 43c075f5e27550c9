// What the CLI loads of the settings before any of the server: `ledge server`'s flags and help come from here.
export { SETTINGS, type SettingKey } from './schema.ts';
export { parseSettings, settingsSchema, SettingError, type ServerFlags, type Settings } from './parse.ts';
export { configurationDoc, environmentHelp, flagOptions } from './render.ts';
