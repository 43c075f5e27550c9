import { buildSchema, graphql, type GraphQLSchema } from 'graphql';
import { Hono } from 'hono';
import type { AppEnv } from '../api-kit/context.ts';
import type { Clock } from '../shared/clock.ts';
import type { Principal } from '../shared/principal.ts';
import type { StorageService } from '../storage/index.ts';

/**
 * The slice of Cloudflare's GraphQL Analytics API (`POST /client/v4/graphql`) that R2 tools read: the dataset
 * `r2StorageAdaptiveGroups` with `max { objectCount payloadSize metadataSize uploadCount }`, filtered by bucket
 * and time, as `wrangler r2 bucket info` asks it. Ledge keeps no history of storage: the one group is what the
 * bucket holds now, at the current time, so a time filter that excludes now finds nothing. The query is parsed
 * and validated by the `graphql` library against this schema, so other datasets and fields get GraphQL's own
 * errors; accounts are those the credentials reach.
 */
const SCHEMA_SDL = `
  scalar Time
  type Query { viewer: Viewer }
  type Viewer { accounts(filter: AccountFilter_InputObject!): [Account!]! }
  input AccountFilter_InputObject { accountTag: String }
  type Account {
    r2StorageAdaptiveGroups(
      limit: Int!
      filter: R2StorageAdaptiveGroupsFilter_InputObject
      orderBy: [R2StorageAdaptiveGroupsOrderBy!]
    ): [R2StorageAdaptiveGroups!]!
  }
  input R2StorageAdaptiveGroupsFilter_InputObject {
    bucketName: String
    datetime: Time
    datetime_geq: Time
    datetime_gt: Time
    datetime_leq: Time
    datetime_lt: Time
  }
  enum R2StorageAdaptiveGroupsOrderBy { datetime_ASC datetime_DESC }
  type R2StorageAdaptiveGroups {
    max: R2StorageAdaptiveGroupsMax
    dimensions: R2StorageAdaptiveGroupsDimensions
  }
  type R2StorageAdaptiveGroupsMax { objectCount: Float payloadSize: Float metadataSize: Float uploadCount: Float }
  type R2StorageAdaptiveGroupsDimensions { datetime: Time bucketName: String }
`;

interface StorageFilter {
  bucketName?: string | null;
  datetime?: string | null;
  datetime_geq?: string | null;
  datetime_gt?: string | null;
  datetime_leq?: string | null;
  datetime_lt?: string | null;
}

const RequestSchema = {
  parse(body: unknown): { query: string; variables?: Record<string, unknown>; operationName?: string } | undefined {
    if (body === null || typeof body !== 'object') return undefined;
    const { query, variables, operationName } = body as Record<string, unknown>;
    if (typeof query !== 'string') return undefined;
    if (variables !== undefined && variables !== null && typeof variables !== 'object') return undefined;
    if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') return undefined;
    return {
      query,
      ...(variables ? { variables: variables as Record<string, unknown> } : {}),
      ...(operationName ? { operationName } : {}),
    };
  },
};

export function analyticsGraphqlRoutes(storage: StorageService, clock: Clock): Hono<AppEnv> {
  const schema: GraphQLSchema = buildSchema(SCHEMA_SDL);
  const app = new Hono<AppEnv>();
  app.post('/graphql', async (c) => {
    const request = RequestSchema.parse(await c.req.json().catch(() => undefined));
    // GraphQL over HTTP answers a malformed request with 400 and its errors list (Cloudflare does the same).
    if (!request)
      return c.json({ data: null, errors: [{ message: 'expected a JSON body with a "query" string' }] }, 400);
    const result = await graphql({
      schema,
      source: request.query,
      variableValues: request.variables ?? null,
      operationName: request.operationName ?? null,
      rootValue: { viewer: () => viewer(c.get('principal'), storage, clock) },
    });
    return c.json({ data: result.data ?? null, errors: result.errors?.map((error) => error.toJSON()) ?? null });
  });
  return app;
}

function viewer(principal: Principal, storage: StorageService, clock: Clock) {
  return {
    accounts: ({ filter }: { filter: { accountTag?: string | null } }) => {
      const reachable = [...principal.accountIds];
      const chosen = filter.accountTag ? reachable.filter((id) => id === filter.accountTag) : reachable;
      return chosen.map((accountId) => ({
        r2StorageAdaptiveGroups: (args: { limit: number; filter?: StorageFilter | null }) =>
          storageGroups(storage, accountId, args, new Date(clock.now())),
      }));
    },
  };
}

async function storageGroups(
  storage: StorageService,
  accountId: string,
  args: { limit: number; filter?: StorageFilter | null },
  at: Date,
) {
  const filter = args.filter ?? {};
  const sampledAt = sampleTime(at, filter);
  if (args.limit < 1 || !sampledAt) return [];
  const names = filter.bucketName
    ? [filter.bucketName]
    : (await storage.buckets.list(accountId, { perPage: 1000, direction: 'asc' })).buckets.map((b) => b.name);
  const groups = [];
  for (const name of names.slice(0, args.limit)) {
    const usage = await storage.buckets.usage(accountId, name).catch(() => undefined);
    if (!usage) continue; // a bucket the account does not have has no samples, as on Cloudflare
    groups.push({
      max: { ...usage, uploadCount: 0 },
      dimensions: { datetime: sampledAt.toISOString(), bucketName: name },
    });
  }
  return groups;
}

/**
 * The time the current sample stands for: now, or the window's end when the caller's clock is behind ours (a
 * window ending "now" on the client). Storage is a gauge, so what the bucket holds now held then too; a window
 * that starts after now has no sample. Times that do not parse are no bound.
 */
function sampleTime(now: Date, filter: StorageFilter): Date | undefined {
  const time = (value: string | null | undefined) => (value ? Date.parse(value) : Number.NaN);
  let t = now.getTime();
  for (const [value, end] of [
    [filter.datetime_leq, 0],
    [filter.datetime_lt, 1],
    [filter.datetime, 0],
  ] as const) {
    const bound = time(value);
    if (!Number.isNaN(bound)) t = Math.min(t, bound - end);
  }
  const geq = time(filter.datetime_geq);
  const gt = time(filter.datetime_gt);
  if ((!Number.isNaN(geq) && t < geq) || (!Number.isNaN(gt) && t <= gt)) return undefined;
  return new Date(t);
}
