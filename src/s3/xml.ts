import { S3Errors } from './errors.ts';

const XML_HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n';
export const S3_NAMESPACE = 'http://s3.amazonaws.com/doc/2006-03-01/';

/** Text for an XML element or attribute (what a tenant stored is always escaped, never markup). */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"'\r]/g, (c) => ESCAPES[c]!);
}
const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
  '\r': '&#13;',
};

/** A tree to render: an element's children are elements (objects/arrays) or text (string, number, boolean). */
export type XmlValue = string | number | boolean | undefined | XmlNode | XmlValue[];
export interface XmlNode {
  [name: string]: XmlValue;
}

/**
 * Renders `<root xmlns=...>...</root>` with the XML declaration; undefined children are left out. An empty
 * namespace renders none (S3's `<Error>` has none, and botocore cannot read one that has).
 */
export function renderXml(root: string, body: XmlNode, namespace = S3_NAMESPACE): string {
  const attrs = namespace === '' ? '' : ` xmlns="${namespace}"`;
  return `${XML_HEAD}<${root}${attrs}>${renderChildren(body)}</${root}>`;
}

function renderChildren(node: XmlNode): string {
  let out = '';
  for (const [name, value] of Object.entries(node)) out += renderElement(name, value);
  return out;
}

function renderElement(name: string, value: XmlValue): string {
  if (value === undefined) return '';
  if (Array.isArray(value)) return value.map((item) => renderElement(name, item)).join('');
  if (typeof value === 'object') return `<${name}>${renderChildren(value)}</${name}>`;
  return `<${name}>${escapeXml(String(value))}</${name}>`;
}

/** A parsed element: its name (namespace prefix dropped), text and child elements. */
export interface XmlElement {
  name: string;
  text: string;
  children: XmlElement[];
}

/** The first child named `name`, its text, and every child named `name`. */
export const child = (element: XmlElement, name: string) => element.children.find((c) => c.name === name);
export const childText = (element: XmlElement, name: string) => child(element, name)?.text;
export const childrenNamed = (element: XmlElement, name: string) => element.children.filter((c) => c.name === name);

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#\d+|[a-z]+);/g, (whole, entity: string) => {
    if (entity.startsWith('#x')) return String.fromCodePoint(Number.parseInt(entity.slice(2), 16));
    if (entity.startsWith('#')) return String.fromCodePoint(Number.parseInt(entity.slice(1), 10));
    const named = ENTITIES[entity];
    if (named === undefined) throw S3Errors.malformedXml();
    return named;
  });
}

/**
 * Parses the small XML documents S3 requests carry (Delete, CompleteMultipartUpload, lifecycle and bucket
 * configurations): elements, text, CDATA, comments; no DTDs (nothing to expand). Malformed input is
 * MalformedXML.
 */
export function parseXml(source: string): XmlElement {
  const root: XmlElement = { name: '#document', text: '', children: [] };
  const stack: XmlElement[] = [root];
  let i = 0;
  const fail = () => {
    throw S3Errors.malformedXml();
  };
  while (i < source.length) {
    const lt = source.indexOf('<', i);
    const textEnd = lt === -1 ? source.length : lt;
    if (textEnd > i) stack.at(-1)!.text += decodeEntities(source.slice(i, textEnd));
    if (lt === -1) break;
    if (source.startsWith('<?', lt)) {
      const end = source.indexOf('?>', lt);
      if (end === -1) fail();
      i = end + 2;
    } else if (source.startsWith('<!--', lt)) {
      const end = source.indexOf('-->', lt);
      if (end === -1) fail();
      i = end + 3;
    } else if (source.startsWith('<![CDATA[', lt)) {
      const end = source.indexOf(']]>', lt);
      if (end === -1) fail();
      stack.at(-1)!.text += source.slice(lt + 9, end);
      i = end + 3;
    } else if (source.startsWith('<!', lt)) {
      fail();
    } else if (source.startsWith('</', lt)) {
      const end = source.indexOf('>', lt);
      if (end === -1) fail();
      const name = localName(source.slice(lt + 2, end).trim());
      const open = stack.pop();
      if (!open || open === root || open.name !== name) fail();
      i = end + 1;
    } else {
      const end = source.indexOf('>', lt);
      if (end === -1) fail();
      const selfClosing = source[end - 1] === '/';
      const inner = source.slice(lt + 1, selfClosing ? end - 1 : end).trim();
      const name = /^[^\s/>]+/.exec(inner)?.[0];
      if (!name) fail();
      const element: XmlElement = { name: localName(name!), text: '', children: [] };
      stack.at(-1)!.children.push(element);
      if (!selfClosing) stack.push(element);
      i = end + 1;
    }
  }
  if (stack.length !== 1 || root.children.length !== 1) fail();
  return root.children[0]!;
}

function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon === -1 ? name : name.slice(colon + 1);
}

/** Reads a whole (small) request body; longer than `limit` bytes is refused. */
export async function readSmallBody(body: AsyncIterable<Uint8Array>, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.byteLength;
    if (total > limit) throw S3Errors.invalidRequest(`The request body is larger than ${limit} bytes.`);
    chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  }
  return Buffer.concat(chunks).toString('utf8');
}
