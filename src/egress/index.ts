export { parseCidr, parseCidrList, parseIp, formatIp, type Cidr } from './addresses.ts';
export {
  DEFAULT_DENY,
  EgressPolicy,
  EgressRefusedError,
  describeRefusal,
  type EgressRefusal,
  type EgressSettings,
} from './policy.ts';
