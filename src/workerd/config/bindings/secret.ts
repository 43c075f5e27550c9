import type { BindingModule } from './contract.ts';

/** A secret (`secret_text`, kept apart from the version's bindings, decrypted): a string in env, as on Cloudflare. */
export const secretText: BindingModule<{ name: string; text: string }> = (secret) => ({
  bindings: [{ name: secret.name, text: secret.text }],
});
