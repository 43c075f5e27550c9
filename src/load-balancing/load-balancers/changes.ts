/**
 * A configuration change the traffic listener must see: a load balancer, a pool or a monitor was created,
 * changed or deleted. Published after the write has committed (unlike the health and enablement buses,
 * nothing has to commit with it); `version` grows by one with every change.
 */
export interface ConfigChange {
  version: number;
  kind: 'load_balancer' | 'pool' | 'monitor' | 'zone';
  accountId: string;
  id: string;
  /** Hostnames whose routing may have changed, when known (load balancer and zone changes). */
  hostnames: string[];
}

export type ConfigChangeListener = (change: ConfigChange) => void;

/** Configuration changes of load balancing, in order; a listener that throws does not stop the others. */
export class ConfigChangeBus {
  readonly #listeners: ConfigChangeListener[] = [];
  #version = 0;

  /** Monotonic: a reader that cached routes at version N is stale once this is above N. */
  get version(): number {
    return this.#version;
  }

  subscribe(listener: ConfigChangeListener): () => void {
    this.#listeners.push(listener);
    return () => {
      const index = this.#listeners.indexOf(listener);
      if (index >= 0) this.#listeners.splice(index, 1);
    };
  }

  publish(change: Omit<ConfigChange, 'version'>): void {
    const event = { ...change, version: ++this.#version };
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch {
        // A consumer's failure is its own; the change has committed and the version has moved on.
      }
    }
  }
}
