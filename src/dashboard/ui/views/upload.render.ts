import { h, replace } from '../dom.ts';

/** One file's line in the upload list: its progress bar and state, moved by upload.ts as the bytes go. */
export interface UploadRow {
  element: HTMLElement;
  progress(loaded: number): void;
  done(): void;
  failed(error: unknown): void;
}

export function renderUploadRow(key: string, size: number): UploadRow {
  const bar = h('progress', { max: size || 1, value: 0, 'aria-label': `Upload of ${key}` });
  const state = h('span', { class: 'upload-state' }, 'Starting');
  return {
    element: h('li', null, h('span', { class: 'name' }, key), ' ', bar, ' ', state),
    progress(loaded) {
      bar.value = loaded;
      replace(state, `${Math.floor((100 * loaded) / (size || 1))}%`);
    },
    done() {
      bar.value = bar.max;
      replace(state, 'Uploaded');
    },
    failed(error) {
      replace(state, `Failed: ${error instanceof Error ? error.message : String(error)}`);
      state.setAttribute('role', 'alert');
    },
  };
}
