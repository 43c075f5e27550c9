/**
 * Hash routes (`#/r2/buckets/photos`): every view has a URL that can be bookmarked and reloaded, and the
 * server needs to know only `/`.
 */
export interface Route {
  path: string[];
  query: URLSearchParams;
}

export function currentRoute(): Route {
  const raw = location.hash.replace(/^#\/?/, '');
  const [path = '', query = ''] = raw.split('?', 2);
  return { path: path.split('/').filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(query) };
}

export function href(...segments: string[]): string {
  return `#/${segments.map(encodeURIComponent).join('/')}`;
}

export function go(target: string): void {
  if (location.hash === target) window.dispatchEvent(new HashChangeEvent('hashchange'));
  else location.hash = target;
}
