export { PublicAccessService, type ManagedDomain, type PublicAccessDeps } from './access-service.ts';
export {
  SqlPublicDomainStore,
  type PublicDomainStore,
  type CustomDomainRecord,
  type PublicHostRow,
} from './domain-store.ts';
export { PublicHostDirectory, type PublicHost } from './host-directory.ts';
export { publicBucketHandler, type PublicBucketHandler } from './public-server.ts';
export { domainRoutes } from './domain-routes.ts';
