// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import type { ApiToken } from '../../../client/index.ts';
import { state } from '../state.ts';
import { EDIT_GROUP, renderTokens } from './tokens.render.ts';
import { cellTexts, labelled, signedInAs } from './render-testing.ts';

const token: ApiToken = {
  id: '0123456789abcdef0123456789abcdef',
  name: 'deploy',
  status: 'active',
  issued_on: '2026-01-01T00:00:00Z',
  policies: [
    {
      id: 'pol',
      effect: 'allow',
      permission_groups: [{ id: EDIT_GROUP }],
      resources: { 'com.cloudflare.api.account.acc1': '*' },
    },
  ],
};
const actions = {
  create: async () => undefined,
  roll: async () => ({ name: '', value: '', accessKeyId: '', secretAccessKey: '' }),
  remove: async () => undefined,
};

describe('the API Tokens page, drawn from its data', () => {
  it("shows each token's S3 Access Key ID (its id) and the S3 endpoint, never a secret in the list", () => {
    signedInAs(state, {});
    const view = renderTokens(
      { tokens: [token], currentId: undefined, accountId: 'acc1', s3Endpoint: 'http://127.0.0.1:9000' },
      actions,
    );
    const [row] = cellTexts([view]);
    expect(row!.slice(0, 6)).toEqual(['deploy', 'Read and write', 'acc1', 'active', row![4], token.id]);
    expect(view.textContent).toContain('S3 endpoint: http://127.0.0.1:9000.');
    expect(view.querySelector('input[readonly]')).toBeNull();
  });

  it('shows the value, the Access Key ID and the Secret Access Key once, right after the token is made', () => {
    signedInAs(state, {});
    const reveal = { name: 'deploy', value: 'v'.repeat(40), accessKeyId: token.id, secretAccessKey: 'ab'.repeat(32) };
    const view = renderTokens({ tokens: [token], currentId: undefined, accountId: 'acc1', reveal }, actions);
    expect(labelled(view, 'Token value').value).toBe(reveal.value);
    expect(labelled(view, 'S3 Access Key ID').value).toBe(token.id);
    expect(labelled(view, 'S3 Secret Access Key').value).toBe(reveal.secretAccessKey);
  });
});
