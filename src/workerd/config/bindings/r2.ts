import type { Binding } from '../../script.ts';
import { externalHttpService } from '../services.ts';
import type { BindingModule } from './contract.ts';

/**
 * `r2_bucket`: workerd's r2Bucket binding on an external service that speaks the R2 wire protocol to the
 * storage backend for that one bucket (the resolver says where, and the headers that name the bucket).
 */
export const r2Bucket: BindingModule<Extract<Binding, { type: 'r2_bucket' }>> = (binding, { deployed, r2 }) => {
  const account = deployed.script.account_id;
  const service = `r2:${account}/${binding.bucket_name}`;
  return {
    bindings: [{ name: binding.name, r2Bucket: service }],
    services: [externalHttpService(service, r2.workerdService(account, binding.bucket_name))],
  };
};
