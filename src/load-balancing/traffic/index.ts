export { TrafficListener, type TrafficListenerOptions } from './listener.ts';
export type { DirectoryRoute, LoadBalancerDirectory, TrafficLoadBalancer } from './directory.ts';
export { DEFAULT_TRAFFIC_SETTINGS, type TrafficSettings } from './settings.ts';
export { AFFINITY_COOKIE } from './affinity.ts';
export type { HostHandler } from './host-handler.ts';
