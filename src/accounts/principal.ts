/** The caller's identity is a shared type (src/shared/principal.ts); accounts builds it and re-exports it. */
export { canAccessAccount, type Principal } from '../shared/principal.ts';
