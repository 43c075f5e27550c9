/**
 * A long-running part of the platform (health checker, dispatcher, runtime supervisor): the composition
 * root starts these after the API listens and stops them in reverse order on shutdown.
 */
export interface BackgroundService {
  name: string;
  start(): Promise<void> | void;
  stop(): Promise<void> | void;
}
