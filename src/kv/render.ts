import type { KvNamespaceRecord } from './store.ts';

/** A namespace as Cloudflare's API shows it. */
export function renderNamespace(record: KvNamespaceRecord) {
  return { id: record.id, title: record.title, supports_url_encoding: true };
}
