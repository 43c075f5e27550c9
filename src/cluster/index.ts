export { clusterMigrations } from './migrations.ts';
export { SqlLeaseStore, type LeaseStore } from './lease-store.ts';
export { SqlNodeStore, type NodeStore } from './node-store.ts';
export { ChangeFeed, type Change } from './change-feed.ts';
export { shardOwner } from './shard.ts';
export { ClusterMembership, type MembershipOptions } from './membership.ts';
export { Cluster, type ClusterOptions } from './cluster.ts';
