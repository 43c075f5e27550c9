// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { renderUploadRow } from './upload.render.ts';

describe("an upload's line in the list", () => {
  it('names the key as text, moves its bar and percentage, and ends Uploaded', () => {
    const key = 'photos/<b>cat</b>.jpg';
    const row = renderUploadRow(key, 200);
    const bar = row.element.querySelector('progress')!;
    expect(row.element.querySelector('.name')?.textContent).toBe(key);
    expect(row.element.querySelector('b')).toBeNull();
    expect(bar.getAttribute('aria-label')).toBe(`Upload of ${key}`);
    expect(row.element.querySelector('.upload-state')?.textContent).toBe('Starting');
    row.progress(50);
    expect(bar.value).toBe(50);
    expect(row.element.querySelector('.upload-state')?.textContent).toBe('25%');
    row.done();
    expect(bar.value).toBe(200);
    expect(row.element.querySelector('.upload-state')?.textContent).toBe('Uploaded');
  });

  it('says why it failed, as an alert', () => {
    const row = renderUploadRow('big.bin', 0);
    row.failed(new Error('the connection broke'));
    const state = row.element.querySelector('.upload-state')!;
    expect(state.textContent).toBe('Failed: the connection broke');
    expect(state.getAttribute('role')).toBe('alert');
  });
});
