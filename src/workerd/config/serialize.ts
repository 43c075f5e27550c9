import { Embed, Enumerant, VOID, type Config } from './types.ts';

/**
 * The one place a workerd configuration becomes text: Cap'n Proto's text format, which `workerd serve`
 * reads with the schema it ships (`/workerd/workerd.capnp`). The records of types.ts carry the schema's
 * field names, so this writes any of them by their shape alone: strings quoted, numbers and booleans as
 * literals, arrays as lists, records as structs (fields in the order the record was built, undefined
 * ones left out), and the three markers for what a plain value cannot say: VOID, Embed and Enumerant.
 */
export function serializeConfig(config: Config): string {
  const fields = fieldsOf(config).map(([name, value]) =>
    Array.isArray(value) && value.length > 0
      ? `  ${name} = [\n    ${value.map(literal).join(',\n    ')}\n  ],`
      : `  ${name} = ${literal(value)},`,
  );
  return `using Workerd = import "/workerd/workerd.capnp";\nconst config :Workerd.Config = (\n${fields.join('\n')}\n);\n`;
}

/**
 * A Text literal. Strings are written raw UTF-8 with `"` and `\` escaped and control characters as \xNN,
 * which the capnp text parser reads back byte for byte.
 */
export function capnpString(value: string): string {
  let out = '"';
  for (const ch of value) {
    const code = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

const IDENTIFIER = /^[A-Za-z][A-Za-z0-9]*$/;

function literal(value: unknown): string {
  if (typeof value === 'string') return capnpString(value);
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new TypeError(`a workerd config number must be an integer: ${value}`);
    return String(value);
  }
  if (value === VOID) return 'void';
  if (value instanceof Embed) return `embed ${capnpString(value.path)}`;
  if (value instanceof Enumerant) return identifier(value.name);
  if (value instanceof Uint8Array) return `0x"${Buffer.from(value).toString('hex')}"`;
  if (Array.isArray(value)) return `[${value.map(literal).join(', ')}]`;
  if (typeof value === 'object' && value !== null) {
    return `(${fieldsOf(value)
      .map(([name, field]) => `${name} = ${literal(field)}`)
      .join(', ')})`;
  }
  throw new TypeError(`a workerd config cannot hold ${String(value)}`);
}

function fieldsOf(record: object): [string, unknown][] {
  return Object.entries(record)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => [identifier(name), value]);
}

function identifier(name: string): string {
  if (!IDENTIFIER.test(name)) throw new TypeError(`not a capnp field or enumerant name: ${JSON.stringify(name)}`);
  return name;
}
