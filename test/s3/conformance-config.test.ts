import {
  GetBucketLifecycleConfigurationCommand,
  GetObjectCommand,
  PutBucketCorsCommand,
  PutBucketLifecycleConfigurationCommand,
  PutObjectCommand,
  type LifecycleRule,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { describe, expect, it } from 'vitest';
import { awsCliEnv } from '../helpers/aws-cli.ts';
import { tempDir } from '../helpers/ledge.ts';
import { failure, run, s3Port, signedFetch, tool } from './helpers.ts';
import { useS3Fixture } from './fixture.ts';

const AWS = tool('aws');

describe('S3 conformance: lifecycle filters and dates, CORS wildcards, both doors agreeing', () => {
  const fx = useS3Fixture({ buckets: ['rules'] });

  const v4 = (path: string, init: RequestInit = {}) =>
    fetch(`${fx.ledge.apiUrl}/accounts/${fx.ledge.accountId}/r2/buckets/rules/${path}`, {
      ...init,
      headers: { ...fx.ledge.tokenHeaders, 'content-type': 'application/json' },
    });
  const putLifecycle = (Rules: LifecycleRule[]) =>
    fx.s3.send(new PutBucketLifecycleConfigurationCommand({ Bucket: 'rules', LifecycleConfiguration: { Rules } }));
  const refusal = async (promise: Promise<unknown>) => {
    const error = await failure(promise);
    return [error.$metadata.httpStatusCode, error.name, error.message];
  };

  it('takes a Filter with And { Prefix } and midnight-UTC dates; the v4 door shows the same rules', async () => {
    await putLifecycle([
      { ID: 'and-prefix', Status: 'Enabled', Filter: { And: { Prefix: 'logs/' } }, Expiration: { Days: 30 } },
      {
        ID: 'dated',
        Status: 'Enabled',
        Filter: { Prefix: 'tmp/' },
        Expiration: { Date: new Date('2030-01-01T00:00:00Z') },
      },
    ]);
    const back = await fx.s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: 'rules' }));
    expect(
      back.Rules?.map((r) => [r.ID, r.Filter?.Prefix, r.Expiration?.Days, r.Expiration?.Date?.toISOString()]),
    ).toEqual([
      ['and-prefix', 'logs/', 30, undefined],
      ['dated', 'tmp/', undefined, '2030-01-01T00:00:00.000Z'],
    ]);
    const shown = ((await (await v4('lifecycle')).json()) as { result: { rules: unknown[] } }).result.rules;
    expect(shown).toEqual([
      expect.objectContaining({ id: 'and-prefix', conditions: { prefix: 'logs/' } }),
      expect.objectContaining({
        id: 'dated',
        deleteObjectsTransition: { condition: { type: 'Date', date: '2030-01-01T00:00:00.000Z' } },
      }),
    ]);

    // The AWS CLI's JSON shape of the same filter.
    const env = awsCliEnv(tempDir('ledge-aws-'), fx.credentials);
    const endpoint = `http://127.0.0.1:${s3Port(fx.ledge)}`;
    const config = {
      Rules: [{ ID: 'cli', Status: 'Enabled', Filter: { And: { Prefix: 'cli/' } }, Expiration: { Days: 7 } }],
    };
    await run(
      AWS,
      ['--endpoint-url', endpoint, 's3api', 'put-bucket-lifecycle-configuration', '--bucket', 'rules'].concat([
        '--lifecycle-configuration',
        JSON.stringify(config),
      ]),
      { env },
    );
    const { stdout } = await run(
      AWS,
      ['--endpoint-url', endpoint, 's3api', 'get-bucket-lifecycle-configuration', '--bucket', 'rules'],
      { env },
    );
    expect(JSON.parse(stdout).Rules).toEqual([
      { ID: 'cli', Status: 'Enabled', Filter: { Prefix: 'cli/' }, Expiration: { Days: 7 } },
    ]);
  });

  it('refuses lifecycle rules as S3 does, with its codes and words', async () => {
    const expire = { Days: 1 };
    expect(
      await refusal(
        putLifecycle([
          { ID: 'noon', Status: 'Enabled', Filter: {}, Expiration: { Date: new Date('2030-01-01T12:00:00Z') } },
        ]),
      ),
    ).toEqual([400, 'InvalidArgument', "'Date' must be at midnight GMT"]);
    expect(
      await refusal(putLifecycle([{ ID: 'zero', Status: 'Enabled', Filter: {}, Expiration: { Days: 0 } }])),
    ).toEqual([400, 'InvalidArgument', "'Days' for Expiration action must be a positive integer"]);
    expect(
      await refusal(putLifecycle([{ ID: 'x'.repeat(256), Status: 'Enabled', Filter: {}, Expiration: expire }])),
    ).toEqual([400, 'InvalidArgument', 'ID length should not exceed allowed limit of 255']);
    const twice: LifecycleRule = { ID: 'twice', Status: 'Enabled', Filter: {}, Expiration: expire };
    expect(await refusal(putLifecycle([twice, twice]))).toEqual([
      400,
      'InvalidArgument',
      'Rule ID must be unique. Found same ID for more than one rule',
    ]);
    const both = {
      ID: 'both',
      Status: 'Enabled' as const,
      Filter: {},
      Expiration: { Days: 1, Date: new Date('2030-01-01') },
    };
    expect((await refusal(putLifecycle([both])))[1]).toBe('MalformedXML');
    const tagged = { ID: 'tag', Status: 'Enabled' as const, Expiration: expire };
    expect(
      (
        await refusal(
          putLifecycle([{ ...tagged, Filter: { And: { Prefix: 'a/', Tags: [{ Key: 'k', Value: 'v' }] } } }]),
        )
      )[0],
    ).toBe(501);
    expect((await refusal(putLifecycle([{ ...tagged, Filter: { ObjectSizeGreaterThan: 10 } }])))[0]).toBe(501);

    // Raw XML the SDK would not send: a rule-level Prefix with a Filter, two predicates outside And, a day
    // that does not exist, a date that is not ISO 8601.
    for (const rule of [
      '<Prefix>a/</Prefix><Filter><Prefix>b/</Prefix></Filter><Expiration><Days>1</Days></Expiration>',
      '<Filter><Prefix>a/</Prefix><ObjectSizeGreaterThan>1</ObjectSizeGreaterThan></Filter><Expiration><Days>1</Days></Expiration>',
      '<Filter/><Expiration><Date>2030-02-30T00:00:00Z</Date></Expiration>',
      '<Filter/><Expiration><Date>20300101</Date></Expiration>',
    ]) {
      const body = `<LifecycleConfiguration><Rule><ID>r</ID><Status>Enabled</Status>${rule}</Rule></LifecycleConfiguration>`;
      const { response } = await signedFetch(fx.ledge, fx.credentials, {
        method: 'PUT',
        path: '/rules?lifecycle',
        body,
      });
      expect([response.status, /<Code>(\w+)<\/Code>/.exec(await response.text())?.[1]]).toEqual([400, 'MalformedXML']);
    }

    // The v4 door refuses the dated rule S3 refuses (wrangler sends midnight UTC), and takes it at midnight.
    const dated = (date: string) =>
      v4('lifecycle', {
        method: 'PUT',
        body: JSON.stringify({
          rules: [
            {
              id: 'v4-dated',
              enabled: true,
              conditions: { prefix: '' },
              deleteObjectsTransition: { condition: { type: 'Date', date } },
            },
          ],
        }),
      });
    expect((await dated('2030-01-01T12:00:00.000Z')).status).toBe(400);
    expect((await dated('2030-01-01T00:00:00.000Z')).status).toBe(200);
  });

  it('matches a wildcard origin (https://*.example.com) and refuses what S3 refuses in CORS rules', async () => {
    await fx.s3.send(
      new PutBucketCorsCommand({
        Bucket: 'rules',
        CORSConfiguration: { CORSRules: [{ AllowedOrigins: ['https://*.example.com'], AllowedMethods: ['GET'] }] },
      }),
    );
    await fx.s3.send(new PutObjectCommand({ Bucket: 'rules', Key: 'page', Body: 'hello' }));
    const url = await getSignedUrl(fx.s3, new GetObjectCommand({ Bucket: 'rules', Key: 'page' }), { expiresIn: 60 });
    const preflight = (origin: string) =>
      fetch(url, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'GET' } });
    for (const origin of ['https://app.example.com', 'https://a.b.example.com']) {
      const allowed = await preflight(origin);
      expect([allowed.status, allowed.headers.get('access-control-allow-origin')]).toEqual([200, origin]);
    }
    for (const origin of [
      'https://example.com',
      'https://evil.com',
      'http://app.example.com',
      'https://app.example.com.evil.com',
    ]) {
      expect((await preflight(origin)).status).toBe(403);
    }
    const get = await fetch(url, { headers: { origin: 'https://app.example.com' } });
    expect([get.status, get.headers.get('access-control-allow-origin')]).toEqual([200, 'https://app.example.com']);

    const putCors = (rule: { AllowedOrigins: string[]; AllowedMethods: string[]; AllowedHeaders?: string[] }) =>
      fx.s3.send(new PutBucketCorsCommand({ Bucket: 'rules', CORSConfiguration: { CORSRules: [rule] } }));
    expect(await refusal(putCors({ AllowedOrigins: ['https://*.*.example.com'], AllowedMethods: ['GET'] }))).toEqual([
      400,
      'InvalidRequest',
      'AllowedOrigin "https://*.*.example.com" can not have more than one wildcard.',
    ]);
    expect(await refusal(putCors({ AllowedOrigins: ['*'], AllowedMethods: ['PATCH'] }))).toEqual([
      400,
      'InvalidRequest',
      'Found unsupported HTTP method in CORS config. Unsupported method is PATCH',
    ]);
    expect(
      await refusal(putCors({ AllowedOrigins: ['*'], AllowedMethods: ['GET'], AllowedHeaders: ['x-*-*'] })),
    ).toEqual([400, 'InvalidRequest', 'AllowedHeader "x-*-*" can not have more than one wildcard.']);
    // The v4 door agrees: the same header pattern is refused there too.
    const v4Cors = await v4('cors', {
      method: 'PUT',
      body: JSON.stringify({ rules: [{ allowed: { origins: ['*'], methods: ['GET'], headers: ['x-*-*'] } }] }),
    });
    expect(v4Cors.status).toBe(400);
  });
});
