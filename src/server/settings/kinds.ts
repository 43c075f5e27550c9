import { parseCidrList, type Cidr } from '../../egress/index.ts';

/**
 * What a setting's value may be: how a raw flag or environment value becomes the typed value, the range the
 * docs and `--help` show, and the one line a bad value stops the server with. A bad value is either outside
 * a `range` (the line is `invalid <setting>: <value> (use <range>)`) or has a `message` of its own, where
 * `{setting}` stands for the flag or variable the value came from.
 */
export interface Kind<T> {
  parse(raw: string): { value: T } | { range: string } | { message: string };
  /** For the docs and `--help`: what values are accepted ("0 to 65535", "text or json"). */
  readonly range: string;
  /** The placeholder `--help` shows after the flag (`--port <port>`); none for a switch. */
  readonly valueName: string | undefined;
}

export function text(valueName = 'value', range = 'any text'): Kind<string> {
  return { parse: (raw) => ({ value: raw }), range, valueName };
}

export function port(): Kind<number> {
  return {
    parse: (raw) => {
      const value = Number(raw);
      return Number.isInteger(value) && value >= 0 && value <= 65535 ? { value } : { range: '0 to 65535' };
    },
    range: '0 to 65535 (0: any free port)',
    valueName: 'port',
  };
}

/**
 * A whole number from `min` to `max` (no upper bound when `max` is undefined), optionally of a unit
 * ("milliseconds", "seconds", "bytes") the range names.
 */
export function integer(min: number, max: number | undefined, unit?: string): Kind<number> {
  const bounds = max === undefined ? `${min} or more` : `${min} to ${max}`;
  const range = unit ? `${unit}, ${bounds}` : bounds;
  const use = unit ? `${unit} from ${min}${max === undefined ? ' up' : ` to ${max}`}` : bounds;
  return {
    parse: (raw) => {
      const value = Number(raw);
      const ok = raw.trim() !== '' && Number.isInteger(value) && value >= min && (max === undefined || value <= max);
      return ok ? { value } : { range: use };
    },
    range,
    valueName: unit === 'milliseconds' ? 'ms' : 'n',
  };
}

export function oneOf<const T extends string>(values: readonly T[]): Kind<T> {
  const range = values.join(' or ').replace(/ or (?=.* or )/g, ', ');
  return {
    parse: (raw) => ((values as readonly string[]).includes(raw) ? { value: raw as T } : { range }),
    range,
    valueName: values.join('|'),
  };
}

/** A switch: the flag alone means true; in the environment 1/true/yes/on or 0/false/no/off. */
export function boolean(): Kind<boolean> {
  return {
    parse: (raw) => {
      if (/^(1|true|yes|on)$/i.test(raw)) return { value: true };
      if (/^(0|false|no|off)$/i.test(raw)) return { value: false };
      return { range: 'true or false' };
    },
    range: 'true or false',
    valueName: undefined,
  };
}

/** Comma-separated CIDRs; a bad entry is named with the parser's own reason. */
export function cidrList(): Kind<readonly Cidr[]> {
  return {
    parse: (raw) => {
      try {
        return { value: parseCidrList(raw) };
      } catch (error) {
        return { message: `{setting}: ${(error as Error).message}` };
      }
    },
    range: 'comma-separated CIDRs',
    valueName: 'cidrs',
  };
}

/** Text that matches `pattern`, which `range` says in words. */
export function matching(pattern: RegExp, range: string, valueName: string): Kind<string> {
  return { parse: (raw) => (pattern.test(raw) ? { value: raw } : { range }), range, valueName };
}

/** A key of `bytes` bytes, base64-encoded (kept as the text given). */
export function base64Key(bytes: number): Kind<string> {
  const range = `${bytes} bytes, base64`;
  return {
    parse: (raw) => (Buffer.from(raw, 'base64').length === bytes ? { value: raw } : { range }),
    range,
    valueName: 'key',
  };
}

/** A DNS name, lower-cased and without a trailing dot. */
export function hostname(example: string): Kind<string> {
  return {
    parse: (raw) => {
      const value = raw.toLowerCase().replace(/\.$/, '');
      if (/^(?!-)[a-z0-9-]{1,63}(?:\.(?!-)[a-z0-9-]{1,63})*$/.test(value) && value.length <= 200) return { value };
      return { message: `{setting} must be a hostname (like ${example}), not "${raw}"` };
    },
    range: 'a hostname',
    valueName: 'domain',
  };
}

/** An http(s) URL of a service: scheme and host, perhaps a port. */
export function serviceUrl(): Kind<string> {
  return {
    parse: (raw) =>
      /^https?:\/\/[^/]+/.test(raw)
        ? { value: raw }
        : { message: `invalid {setting} ${raw}: expected http(s)://host[:port]` },
    range: 'http(s)://host[:port]',
    valueName: 'url',
  };
}
