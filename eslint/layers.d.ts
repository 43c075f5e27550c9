/** The layer table of eslint/layers.js: which folders of src/ each folder may import. */
export const LAYERS: Record<string, string[]>;
export const layersPlugin: unknown;
