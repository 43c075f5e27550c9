// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { state } from '../state.ts';
import { renderNamespace, renderNamespaces, type Namespace } from './durable-objects.render.ts';
import { cellTexts, signedInAs } from './render-testing.ts';

const markup = '<img src=x onerror=alert(1)>';
const counter: Namespace = { id: 'ns1', class: 'Counter', name: 'app_Counter', script: markup, use_sqlite: true };

describe('Durable Objects, drawn from their data', () => {
  it('lists the classes with their Worker and storage, names as text, each linking to its objects', () => {
    signedInAs(state, {});
    const view = renderNamespaces([counter, { ...counter, id: 'ns2', class: 'Legacy', use_sqlite: false }]);
    expect(cellTexts([view])).toEqual([
      ['Counter', markup, 'SQLite', 'ns1'],
      ['Legacy', markup, 'Key-value', 'ns2'],
    ]);
    expect(view.querySelector('img')).toBeNull();
    expect(view.querySelector('td a')?.getAttribute('href')).toBe('#/durable-objects/ns1');
    expect(renderNamespaces([]).textContent).toContain('No Durable Object classes yet');
  });

  it("shows a page of a class's objects, with a link to the next page and back to the first", () => {
    signedInAs(state, {});
    const ids = ['a'.repeat(64), 'b'.repeat(64)];
    const links = {
      next: (cursor: string) => `#/durable-objects/ns1?cursor=${cursor}`,
      first: '#/durable-objects/ns1',
    };
    const view = renderNamespace(counter, { ids, cursor: ids[1] }, links);
    expect(cellTexts([view])).toEqual(ids.map((id) => [id]));
    expect(view.textContent).toContain('Objects with stored data (2+)');
    const hrefs = Array.from(view.querySelectorAll('a')).map((a) => [a.textContent, a.getAttribute('href')]);
    expect(hrefs).toContainEqual(['Next page', `#/durable-objects/ns1?cursor=${ids[1]}`]);
    expect(hrefs).toContainEqual(['First page', '#/durable-objects/ns1']);
    const last = renderNamespace(counter, { ids: [], cursor: undefined }, { ...links, first: undefined });
    expect(last.textContent).toContain('No object of this class has stored data yet.');
    expect(Array.from(last.querySelectorAll('a')).map((a) => a.textContent)).not.toContain('Next page');
  });
});
