import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createS3Client } from '../../../src/storage/s3-client.ts';
import { call } from '../../notifications/api-helpers.ts';
import { waitUntil } from '../../notifications/receivers.ts';
import { startS3Server, type S3Server } from '../../helpers/s3-server.ts';
import { callFunctionOn, startCluster, type ClusterNode, type TestCluster } from '../../cluster/cluster-helpers.ts';
import { deployAssetsSite } from './api-deploy.ts';

const SITE = {
  '/index.html': '<h1>served by any node</h1>',
  '/app.js': 'console.log("from the S3 store");',
  '/404.html': '<h1>no such page</h1>',
};

/**
 * Static assets on the S3 blob store (Swift's s3api), two nodes on one PostgreSQL: the bytes a deploy on one
 * node stores are in the bucket, and the other node, which never received them, serves the site from there.
 */
describe('static assets in the S3 store, served by every node', () => {
  let s3: S3Server;
  let cluster: TestCluster;
  let nodes: ClusterNode[];
  let inspect: S3Client;
  let subdomain: string;

  beforeAll(async () => {
    s3 = await startS3Server();
    cluster = await startCluster(s3, 2);
    nodes = cluster.nodes;
    inspect = createS3Client({ ...s3, bucket: cluster.bucket, prefix: '' });
    const answer = await call(nodes[0]!, 'GET', `/accounts/${nodes[0]!.accountId}/workers/subdomain`);
    subdomain = (answer.body.result as { subdomain: string }).subdomain;
  });

  afterAll(async () => {
    inspect?.destroy();
    await cluster?.stop();
    await s3?.stop();
  });

  const servedBy = (node: ClusterNode, path: string, expected: string) =>
    waitUntil(
      async () => {
        const res = await callFunctionOn(node.functionsPort, `s3-site.${subdomain}.localhost`, path);
        return res.body === expected ? res : undefined;
      },
      30_000,
      `${node.name} to serve ${path}`,
    );

  it('a site deployed on node 1 keeps its files in the bucket, and node 2 serves them', async () => {
    const [one, two] = nodes as [ClusterNode, ClusterNode];
    await deployAssetsSite(one, 's3-site', SITE, { not_found_handling: '404-page' });

    const listed = await inspect.send(new ListObjectsV2Command({ Bucket: cluster.bucket, Prefix: 'assets/' }));
    const sizes = (listed.Contents ?? []).map((o) => o.Size).sort();
    expect(sizes).toEqual(
      Object.values(SITE)
        .map((text) => Buffer.byteLength(text))
        .sort(),
    );

    expect((await servedBy(two, '/', SITE['/index.html'])).status).toBe(200);
    expect((await servedBy(two, '/app.js', SITE['/app.js'])).status).toBe(200);
    expect((await servedBy(two, '/missing', SITE['/404.html'])).status).toBe(404);
    expect((await servedBy(one, '/app.js', SITE['/app.js'])).status).toBe(200);
  });

  it('a redeploy of one changed file on node 2 stores that file alone, and node 1 serves it', async () => {
    const [one, two] = nodes as [ClusterNode, ClusterNode];
    const changed = { ...SITE, '/app.js': 'console.log("version two");' };
    await deployAssetsSite(two, 's3-site', changed, { not_found_handling: '404-page' });
    const listed = await inspect.send(new ListObjectsV2Command({ Bucket: cluster.bucket, Prefix: 'assets/' }));
    expect(listed.Contents ?? []).toHaveLength(Object.keys(SITE).length + 1);
    expect((await servedBy(one, '/app.js', changed['/app.js'])).status).toBe(200);
    expect((await servedBy(one, '/', SITE['/index.html'])).status).toBe(200);
  });
});
