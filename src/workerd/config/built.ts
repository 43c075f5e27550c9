import { Embed, type Config } from './types.ts';

/** A file workerd reads beside its config (`embed`), by its path relative to the config's directory. */
export interface ConfigFile {
  path: string;
  content: string | Uint8Array;
}

/**
 * A built configuration: the value, the files it embeds, and the directories that must exist before workerd
 * starts (absolute paths, e.g. the tail flag directories its disk services are rooted at). Building one
 * touches nothing; write.ts puts it on disk.
 */
export interface BuiltConfig {
  config: Config;
  files: ConfigFile[];
  directories: string[];
}

/** The files a config being built embeds: each path once (the platform's modules are shared by every worker). */
export class ConfigFiles {
  readonly #files = new Map<string, string | Uint8Array>();

  /** Records `content` under `path` and returns the field value that embeds it. */
  embed(path: string, content: string | Uint8Array): Embed {
    this.#files.set(path, content);
    return new Embed(path);
  }

  list(): ConfigFile[] {
    return [...this.#files].map(([path, content]) => ({ path, content }));
  }
}
