import { describe, expect, it } from 'vitest';
import { pageInfo, pageOf, parsePagination } from '../../src/api-kit/pagination.ts';
import { LedgeError } from '../../src/shared/errors.ts';

const options = { defaultPerPage: 25, maxPerPage: 1000, code: 1002 };

describe('parsePagination', () => {
  it('defaults to page 1 of the default size', () => {
    expect(parsePagination({}, options)).toEqual({ page: 1, perPage: 25, offset: 0, limit: 25 });
  });

  it('accepts page/per_page', () => {
    expect(parsePagination({ page: '3', per_page: '10' }, options)).toEqual({
      page: 3,
      perPage: 10,
      offset: 20,
      limit: 10,
    });
  });

  it('accepts limit/offset and reports the page they fall on', () => {
    expect(parsePagination({ limit: '10', offset: '35' }, options)).toEqual({
      page: 4,
      perPage: 10,
      offset: 35,
      limit: 10,
    });
    expect(parsePagination({ offset: '50' }, options)).toMatchObject({ offset: 50, limit: 25 });
  });

  it.each([
    [{ page: '0' }],
    [{ page: '-1' }],
    [{ page: 'two' }],
    [{ per_page: '0' }],
    [{ per_page: '1001' }],
    [{ per_page: '2.5' }],
    [{ limit: '0' }],
    [{ offset: '-3' }],
    [{ page: '1', limit: '5' }],
  ])('refuses %o with the subsystem code', (query) => {
    try {
      parsePagination(query, options);
      expect.unreachable('should have thrown');
    } catch (error) {
      expect(error).toBeInstanceOf(LedgeError);
      expect((error as LedgeError).status).toBe(400);
      expect((error as LedgeError).code).toBe(1002);
    }
  });
});

describe('pageInfo / pageOf', () => {
  it('computes result_info and an empty page past the end', () => {
    const items = Array.from({ length: 26 }, (_, i) => i);
    const second = pageOf(items, parsePagination({ page: '2' }, options));
    expect(second.items).toEqual([25]);
    expect(second.info).toEqual({ page: 2, per_page: 25, count: 1, total_count: 26, total_pages: 2 });
    const third = pageOf(items, parsePagination({ page: '3' }, options));
    expect(third.items).toEqual([]);
    expect(third.info.count).toBe(0);
    expect(pageInfo(parsePagination({}, options), 0, 0).total_pages).toBe(0);
  });
});
