import { affinityCookie, affinityMode, type HeaderSessions } from './affinity.ts';
import type { ProxyRoute } from '../../proxy/index.ts';
import { chooseTarget, type SteeringContext, type Target } from './steering.ts';

/** Where a request goes, and what the session affinity needs written back: the proxy engine's route. */
export class Route implements ProxyRoute<Target> {
  readonly ctx: SteeringContext;
  readonly target: Target;
  /** Set-Cookie for a new cookie session. */
  readonly setCookie: string | undefined;
  /** Header-affinity key to record once the origin answered. */
  readonly headerKey: string | undefined;
  readonly #sessions: HeaderSessions;

  constructor(ctx: SteeringContext, target: Target, sessions: HeaderSessions, setCookie?: string, headerKey?: string) {
    this.ctx = ctx;
    this.target = target;
    this.#sessions = sessions;
    this.setCookie = setCookie;
    this.headerKey = headerKey;
  }

  /** The origin's `header.Host`, when set, replaces the client's. */
  hostFor(target: Target): string | undefined {
    return target.origin.header?.Host[0];
  }

  /** Another origin after a connection failure, by the same steering (the failed one avoided). */
  retryTarget(failed: Target): Target | undefined {
    // (At the time of the retry, not of the request: passive health may have changed since.)
    return chooseTarget({ ...this.ctx, now: undefined }, failed);
  }

  /** A cookie session whose first origin failed is pinned to the one that answered. */
  retryCookie(target: Target): string | undefined {
    const lb = this.ctx.resolved.loadBalancer;
    const mode = affinityMode(lb);
    return mode === 'cookie' || mode === 'ip_cookie' ? affinityCookie(lb, target, false) : undefined;
  }

  answered(target: Target): void {
    if (this.headerKey) this.#sessions.set(this.ctx.resolved.loadBalancer, this.headerKey, target);
  }
}
