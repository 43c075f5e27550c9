// @vitest-environment happy-dom
import { describe, expect, it, vi } from 'vitest';
import { state } from '../state.ts';
import { labelled, signedInAs } from './render-testing.ts';
import { renderUploader, renderUploadRow } from './upload.render.ts';

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

describe('the uploader', () => {
  it('hands picked files on with their names, and a drop with its transfer', () => {
    signedInAs(state, {});
    const pick = vi.fn();
    const drop = vi.fn();
    const { element, list } = renderUploader({ pick, drop });
    const files = labelled(element, 'Upload files');
    const file = new File(['hi'], 'a.txt');
    Object.defineProperty(files, 'files', { value: [file] });
    files.dispatchEvent(new Event('change'));
    expect(pick).toHaveBeenCalledWith([{ file, path: 'a.txt' }]);
    element.querySelector('.drop')!.dispatchEvent(new Event('drop', { cancelable: true }));
    expect(drop).toHaveBeenCalledOnce();
    expect(list.getAttribute('aria-label')).toBe('Uploads');
    expect(element.contains(list)).toBe(true);
  });

  it('is off for a read-only session, and says so', () => {
    signedInAs(state, { read_only: true });
    const { element } = renderUploader({ pick: () => {}, drop: () => {} });
    expect(labelled(element, 'Upload files').disabled).toBe(true);
    expect(labelled(element, 'Upload a folder').disabled).toBe(true);
    expect(element.querySelector('.drop')?.textContent).toBe('Read-only token: uploads are off.');
  });
});
