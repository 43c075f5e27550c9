import { h, replace, uid } from '../dom.ts';
import { readOnly } from '../state.ts';

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

/** A file to upload and its path below the folder shown (a picked folder's files keep their relative path). */
export interface PickedFile {
  file: File;
  path: string;
}

/**
 * Upload: files or a whole folder, picked or dropped, and the list their rows go in. `drop` reads a drop's
 * entries (folders are walked) before `pick` gets the files; a read-only session sees the inputs off.
 */
export function renderUploader(actions: {
  pick(files: PickedFile[]): void;
  drop(transfer: DataTransfer | null): void;
}): { element: HTMLElement; list: HTMLElement } {
  const filesId = uid();
  const folderId = uid();
  const files = h('input', { id: filesId, type: 'file', multiple: true });
  const folder = h('input', { id: folderId, type: 'file', webkitdirectory: true });
  const list = h('ul', { class: 'uploads', 'aria-label': 'Uploads' });
  const drop = h('div', { class: 'drop', tabindex: -1 }, 'Drop files or folders here');
  files.addEventListener('change', () =>
    actions.pick(Array.from(files.files ?? []).map((file) => ({ file, path: file.name }))),
  );
  folder.addEventListener('change', () =>
    actions.pick(Array.from(folder.files ?? []).map((file) => ({ file, path: file.webkitRelativePath || file.name }))),
  );
  drop.addEventListener('dragover', (event) => {
    event.preventDefault();
    drop.classList.add('over');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (event) => {
    event.preventDefault();
    drop.classList.remove('over');
    actions.drop(event.dataTransfer);
  });
  const element = h(
    'section',
    { class: 'card upload', 'aria-label': 'Upload' },
    h('div', { class: 'field' }, h('label', { for: filesId }, 'Upload files'), files),
    h('div', { class: 'field' }, h('label', { for: folderId }, 'Upload a folder'), folder),
    drop,
    list,
  );
  if (readOnly()) {
    files.disabled = true;
    folder.disabled = true;
    replace(drop, 'Read-only token: uploads are off.');
  }
  return { element, list };
}
