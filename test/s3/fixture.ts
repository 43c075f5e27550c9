import { CreateBucketCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { s3Client, s3CredentialsOf, type S3Credentials } from './helpers.ts';

/** What an S3 suite works against: its own Ledge, the S3 key pair of its token, and an SDK client for them. */
export interface S3Fixture {
  ledge: TestLedge;
  credentials: S3Credentials;
  s3: S3Client;
}

/**
 * The S3 suites' one fixture: before the suite, a Ledge of its own with the buckets (and small objects) it starts
 * from; after it, the client and the server closed. Its fields are set once the suite's beforeAll has run.
 */
export function useS3Fixture(start: {
  buckets: string[];
  objects?: { Bucket: string; Key: string; Body: string }[];
}): S3Fixture {
  const fixture = {} as S3Fixture;
  beforeAll(async () => {
    fixture.ledge = await startLedge();
    fixture.credentials = await s3CredentialsOf(fixture.ledge);
    fixture.s3 = s3Client(fixture.ledge, fixture.credentials);
    for (const Bucket of start.buckets) await fixture.s3.send(new CreateBucketCommand({ Bucket }));
    for (const object of start.objects ?? []) await fixture.s3.send(new PutObjectCommand(object));
  });
  afterAll(async () => {
    fixture.s3?.destroy();
    await fixture.ledge?.close();
  });
  return fixture;
}
