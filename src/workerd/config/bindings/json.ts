import type { Binding } from '../../script.ts';
import type { BindingModule } from './contract.ts';

/** `json`: the value, parsed by workerd from its JSON text. */
export const json: BindingModule<Extract<Binding, { type: 'json' }>> = (binding) => ({
  bindings: [{ name: binding.name, json: JSON.stringify(binding.json) }],
});
