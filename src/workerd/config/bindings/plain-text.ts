import type { Binding } from '../../script.ts';
import type { BindingModule } from './contract.ts';

/** `plain_text`: a string in env. */
export const plainText: BindingModule<Extract<Binding, { type: 'plain_text' }>> = (binding) => ({
  bindings: [{ name: binding.name, text: binding.text }],
});
