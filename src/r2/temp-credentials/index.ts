export { TemporaryCredentialService, type TempCredentialDeps, type TempCredentialLookup } from './service.ts';
export { tempCredentialRoutes } from './routes.ts';
export {
  grantAllowsAction,
  grantAllowsKey,
  grantAllowsListing,
  TEMP_PERMISSIONS,
  type TempPermission,
  type TemporaryGrant,
} from './scope.ts';
