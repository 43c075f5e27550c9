import type { Kind } from './kinds.ts';

/** The parts of docs/configuration.md and of `ledge server --help`, in their order. */
export const SECTIONS = [
  'Server',
  'Records and keys',
  'Blobs on S3',
  'First start',
  'HTTP servers',
  'Egress',
  'Functions',
  'R2',
  'Load balancing',
  'HTTPS',
  'Notifications',
  'Nodes',
  'Logs',
] as const;
export type Section = (typeof SECTIONS)[number];

/**
 * One setting as the schema declares it: where it comes from (a flag, if it has one, wins over its
 * environment variable, which wins over the default), what values it takes, and what it does.
 */
export interface Setting<T> {
  /** `--port`; a setting without one is read from the environment only (secrets, tunables). */
  readonly flag: string | undefined;
  readonly env: string;
  /** Further variables read, in order, when `env` is unset (AWS_ACCESS_KEY_ID for LEDGE_S3_ACCESS_KEY_ID). */
  readonly alsoEnv: readonly string[];
  readonly kind: Kind<NonNullable<T>>;
  /** The value when the setting is unset (undefined: it stays unset). */
  defaultValue(): T;
  /** The default as the docs show it ("8787", "CPUs, at most 4"), or what being unset means. */
  readonly defaultText: string | undefined;
  /** Unset unless given (no default value): `defaultText` says what unset means. */
  readonly optional: boolean;
  /** One line: what it does. */
  readonly description: string;
  /** The words a bad value's line names it by, where users know a message already ("port"). */
  readonly label: string | undefined;
  readonly section: Section;
  /** Never shown: a value that is a secret (its default is made, or there is none). */
  readonly secret: boolean;
}

interface Declaration<T> {
  flag?: string;
  env: string;
  alsoEnv?: readonly string[];
  kind: Kind<T>;
  description: string;
  label?: string;
  section: Section;
  secret?: boolean;
}

/** A setting with a default: a value, or a function of the machine (the number of CPUs) with its words. */
export function withDefault<T>(
  declaration: Declaration<T> & { default: NoInfer<T> | { compute: () => NoInfer<T>; text: string } },
): Setting<T> {
  const fallback = declaration.default;
  const computed = typeof fallback === 'object' && fallback !== null && 'compute' in fallback;
  return {
    ...common(declaration),
    defaultValue: () => (computed ? fallback.compute() : (fallback as T)),
    optional: false,
    defaultText: computed
      ? fallback.text
      : Array.isArray(fallback) && fallback.length === 0
        ? 'none'
        : String(fallback),
  };
}

/** A setting that stays unset unless given; `unsetText` says what that means, for the docs. */
export function optional<T>(declaration: Declaration<T> & { unsetText?: string }): Setting<T | undefined> {
  return { ...common(declaration), defaultValue: () => undefined, defaultText: declaration.unsetText, optional: true };
}

function common<T>(declaration: Declaration<T>) {
  return {
    flag: declaration.flag,
    env: declaration.env,
    alsoEnv: declaration.alsoEnv ?? [],
    kind: declaration.kind as Kind<NonNullable<T>>,
    description: declaration.description,
    label: declaration.label,
    section: declaration.section,
    secret: declaration.secret ?? false,
  };
}
