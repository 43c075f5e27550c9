import { randomUUID } from 'node:crypto';
import type { Clock } from '../shared/clock.ts';
import { isoNow } from '../shared/time.ts';
import { WorkflowErrors } from './errors.ts';
import type { EngineEvent, EngineMeta, InstanceLine } from './render.ts';
import { INSTANCE_ID, WORKFLOW_NAME, type InstanceCreate, type WorkflowRecord } from './schemas.ts';

/** What the function runtime answers for a script's Workflows engine (workerd/workflow-call.ts). */
export interface WorkflowRuntime {
  callWorkflows(
    target: { accountId: string; script: string },
    call: string,
    query: Record<string, string>,
    body?: unknown,
  ): Promise<{ status: number; body: unknown }>;
}

export interface WorkflowStoreLike {
  upsert(record: WorkflowRecord): Promise<WorkflowRecord>;
  find(accountId: string, name: string): Promise<WorkflowRecord | undefined>;
  list(
    accountId: string,
    query: { search?: string | undefined; offset: number; limit: number },
  ): Promise<{ workflows: WorkflowRecord[]; total: number }>;
  delete(accountId: string, name: string): Promise<boolean>;
}

/** Cloudflare's limits on what an instance is given: params and an event's payload, 1 MiB each (as JSON). */
export const WORKFLOW_LIMITS = { maxParamsBytes: 1024 * 1024, maxEventBytes: 1024 * 1024 } as const;

type EngineError = { error?: { code?: string; message?: string } };

/**
 * Workflows: the records (which Worker runs a Workflow), and its instances through the engine of the Worker
 * that runs it. A Workflow belongs to one account: every call finds its record in the caller's account first,
 * and reaches only the engine of that account's Worker, for that Workflow's name.
 */
export class WorkflowService {
  readonly #store: WorkflowStoreLike;
  readonly #runtime: WorkflowRuntime;
  readonly #scriptExists: (accountId: string, script: string) => Promise<boolean>;
  readonly #clock: Clock;

  constructor(deps: {
    store: WorkflowStoreLike;
    runtime: WorkflowRuntime;
    scriptExists: (accountId: string, script: string) => Promise<boolean>;
    clock: Clock;
  }) {
    this.#store = deps.store;
    this.#runtime = deps.runtime;
    this.#scriptExists = deps.scriptExists;
    this.#clock = deps.clock;
  }

  async put(
    accountId: string,
    name: string,
    body: { script_name: string; class_name: string; limits?: { steps?: number | undefined } | undefined },
  ): Promise<WorkflowRecord> {
    if (!WORKFLOW_NAME.test(name)) {
      throw WorkflowErrors.validation('A Workflow name is 1 to 64 letters, digits, "-" or "_".');
    }
    if (!(await this.#scriptExists(accountId, body.script_name))) throw WorkflowErrors.scriptMissing(body.script_name);
    const now = isoNow(this.#clock);
    const existing = await this.#store.find(accountId, name);
    return this.#store.upsert({
      id: existing?.id ?? randomUUID(),
      account_id: accountId,
      name,
      script_name: body.script_name,
      class_name: body.class_name,
      step_limit: body.limits?.steps ?? null,
      created_on: existing?.created_on ?? now,
      modified_on: now,
    });
  }

  async require(accountId: string, name: string): Promise<WorkflowRecord> {
    const record = await this.#store.find(accountId, name);
    if (!record) throw WorkflowErrors.notFound(name);
    return record;
  }

  list(accountId: string, query: { search?: string | undefined; offset: number; limit: number }) {
    return this.#store.list(accountId, query);
  }

  /** Deletes the Workflow and its instances. */
  async delete(accountId: string, name: string): Promise<void> {
    const record = await this.require(accountId, name);
    const { instances } = await this.instances(record, { offset: 0, limit: 1_000_000 }).catch(() => ({
      instances: [] as InstanceLine[],
    }));
    for (const line of instances) await this.#call(record, 'delete', { id: line.id }).catch(() => undefined);
    await this.#store.delete(accountId, name);
  }

  /** The Worker that ran the Workflow was deleted (its instances stay until the Workflow is deleted). */
  async scriptDeleted(record: WorkflowRecord): Promise<boolean> {
    return !(await this.#scriptExists(record.account_id, record.script_name));
  }

  /** How many instances are in each status (the Workflow's `instances`). */
  async counts(record: WorkflowRecord): Promise<Record<string, number>> {
    const { instances } = await this.instances(record, { offset: 0, limit: 1_000_000 }).catch(() => ({
      instances: [] as InstanceLine[],
    }));
    const counts: Record<string, number> = {};
    for (const line of instances) counts[line.status] = (counts[line.status] ?? 0) + 1;
    return counts;
  }

  async instances(
    record: WorkflowRecord,
    query: { offset: number; limit: number; status?: string | undefined; direction?: string | undefined },
  ): Promise<{ total: number; instances: InstanceLine[] }> {
    const q: Record<string, string> = { offset: String(query.offset), limit: String(query.limit) };
    if (query.status) q['status'] = query.status;
    if (query.direction) q['direction'] = query.direction;
    return (await this.#call(record, 'instances', q)) as { total: number; instances: InstanceLine[] };
  }

  async create(record: WorkflowRecord, body: InstanceCreate): Promise<{ id: string; status: string }> {
    return (await this.#call(record, 'create', {}, this.#createOptions(body))) as { id: string; status: string };
  }

  async createBatch(record: WorkflowRecord, bodies: InstanceCreate[]): Promise<{ id: string; status: string }[]> {
    const created: { id: string; status: string }[] = [];
    for (const body of bodies) created.push(await this.create(record, body));
    return created;
  }

  async describe(record: WorkflowRecord, id: string): Promise<{ meta: EngineMeta; history: EngineEvent[] }> {
    this.#checkId(id);
    const described = (await this.#call(record, 'describe', { id })) as {
      meta: EngineMeta;
      history: EngineEvent[];
    } | null;
    if (!described) throw WorkflowErrors.instanceNotFound(id);
    return described;
  }

  async action(record: WorkflowRecord, id: string, action: string): Promise<{ status: string; timestamp: string }> {
    this.#checkId(id);
    const answer = (await this.#call(record, 'action', { id, action })) as { status: string };
    return { status: answer.status, timestamp: isoNow(this.#clock) };
  }

  /** Sends the event; answers when it was taken. */
  async sendEvent(record: WorkflowRecord, id: string, type: string, payload: unknown): Promise<string> {
    this.#checkId(id);
    if (Buffer.byteLength(JSON.stringify(payload ?? null)) > WORKFLOW_LIMITS.maxEventBytes) {
      throw WorkflowErrors.validation('An event payload is at most 1 MiB (as JSON).');
    }
    await this.#call(record, 'event', { id, type }, payload ?? null);
    return isoNow(this.#clock);
  }

  #checkId(id: string): void {
    if (!INSTANCE_ID.test(id)) throw WorkflowErrors.invalidInstanceId();
  }

  #createOptions(body: InstanceCreate) {
    if (body.instance_id !== undefined) this.#checkId(body.instance_id);
    if (Buffer.byteLength(JSON.stringify(body.params ?? {})) > WORKFLOW_LIMITS.maxParamsBytes) {
      throw WorkflowErrors.validation("An instance's params are at most 1 MiB (as JSON).");
    }
    const retention = body.instance_retention;
    return {
      ...(body.instance_id !== undefined ? { id: body.instance_id } : {}),
      params: body.params ?? {},
      ...(retention
        ? {
            retention: {
              ...(retention.success_retention !== undefined ? { successRetention: retention.success_retention } : {}),
              ...(retention.error_retention !== undefined ? { errorRetention: retention.error_retention } : {}),
            },
          }
        : {}),
    };
  }

  /** One call to the engine of the Worker that runs the Workflow, its refusals as the API's errors. */
  async #call(record: WorkflowRecord, call: string, query: Record<string, string>, body?: unknown): Promise<unknown> {
    const answer = await this.#runtime.callWorkflows(
      { accountId: record.account_id, script: record.script_name },
      call,
      { ...query, workflow: record.name },
      body,
    );
    if (answer.status === 200) return answer.body;
    const { code, message = '' } = (answer.body as EngineError).error ?? {};
    const id = query['id'] ?? (body as { id?: string } | undefined)?.id ?? '';
    if (code === 'instance.not_found') throw WorkflowErrors.instanceNotFound(id);
    if (code === 'instance.already_exists') throw WorkflowErrors.instanceExists(id);
    if (code === 'instance.invalid_id' || /invalid id/i.test(message)) throw WorkflowErrors.invalidInstanceId();
    if (code === 'workflow.not_found') {
      throw WorkflowErrors.unavailable(
        `the Worker "${record.script_name}" does not run it: deploy it with a [[workflows]] binding to "${record.name}"`,
      );
    }
    if (answer.status >= 500 || answer.status === 404) throw WorkflowErrors.unavailable(message || 'not running');
    throw WorkflowErrors.engine(message);
  }
}
