import type { ESLint } from 'eslint';

/** The layer table of eslint/layers.js: which folders of src/ each folder may import. */
export const LAYERS: Record<string, string[]>;
/** A cycle in a layer table (its layers in order, the first repeated at the end), or null. */
export function layerCycle(layers: Record<string, string[]>): string[] | null;
/** The layer rule over a table of one's own. */
export function createLayersPlugin(layers: Record<string, string[]>): ESLint.Plugin;
export const layersPlugin: ESLint.Plugin;
