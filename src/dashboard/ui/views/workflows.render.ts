import { formatTime, h, table } from '../dom.ts';
import { href } from '../router.ts';
import { confirmDialog, notice, pager, pageView, writeButton } from '../ui-kit.ts';

/** A Workflow as GET /workflows answers it. */
export interface Workflow {
  id: string;
  name: string;
  class_name: string;
  script_name: string;
  created_on: string;
  instances: Record<string, number>;
}

/** One line of GET /workflows/{name}/instances. */
export interface InstanceLine {
  id: string;
  status: string;
  created_on: string;
  modified_on: string;
  ended_on: string | null;
}

type Attempt = {
  start: string;
  end: string | null;
  success: boolean | null;
  error: { name: string; message: string } | null;
};
/** One entry of an instance's `steps` (GET /workflows/{name}/instances/{id}). */
export type StepView =
  | {
      type: 'step';
      name: string;
      start: string;
      end: string | null;
      success: boolean | null;
      output: string | null;
      attempts: Attempt[];
    }
  | { type: 'sleep'; name: string; start: string; end: string; finished: boolean }
  | {
      type: 'waitForEvent';
      name: string;
      start: string;
      end: string;
      finished: boolean;
      event_type?: string;
      error: { message: string } | null;
    }
  | { type: 'termination'; trigger: { source: string } };

export interface InstanceView {
  status: string;
  params: unknown;
  queued: string;
  start: string | null;
  end: string | null;
  output: string | number;
  error: { name: string; message: string } | null;
  steps: StepView[];
}

const counts = (instances: Record<string, number>): string =>
  Object.entries(instances)
    .map(([status, n]) => `${n} ${status}`)
    .join(', ') || 'none';

/** "Workflows": the account's Workflows, the Worker that runs each and its instances by status. */
export function renderWorkflows(workflows: Workflow[]): HTMLElement {
  const rows = workflows.map((workflow) => [
    h('a', { href: href('workflows', workflow.name) }, workflow.name),
    h('a', { href: href('workers', workflow.script_name) }, workflow.script_name),
    h('code', null, workflow.class_name),
    counts(workflow.instances),
    formatTime(workflow.created_on),
  ]);
  return pageView(
    'Workflows',
    table(
      `Workflows (${workflows.length})`,
      ['Workflow', 'Worker', 'Class', 'Instances', 'Created'],
      rows,
      'No Workflows yet: deploy a Worker with a [[workflows]] binding (wrangler deploy).',
    ),
  );
}

/** One Workflow: its instances, a page at a time, newest first. */
export function renderWorkflow(
  workflow: Workflow,
  instances: { items: InstanceLine[]; page: number; totalPages: number },
  show: (page: number) => void,
): HTMLElement {
  const rows = instances.items.map((line) => [
    h('a', { href: href('workflows', workflow.name, line.id) }, line.id),
    line.status,
    formatTime(line.created_on),
    formatTime(line.ended_on),
  ]);
  return pageView(
    `Workflow: ${workflow.name}`,
    h(
      'p',
      null,
      h('a', { href: href('workflows') }, 'All Workflows'),
      ` · Worker ${workflow.script_name} · class ${workflow.class_name}`,
    ),
    table(
      'Instances',
      ['Instance', 'Status', 'Created', 'Ended'],
      rows,
      `No instances yet: trigger one with wrangler workflows trigger ${workflow.name}.`,
    ),
    pager(instances.page, instances.totalPages, show),
  );
}

/** What a step did, in one line of text. */
function stepSummary(step: StepView): string {
  switch (step.type) {
    case 'step': {
      const tries = step.attempts.length;
      const state = step.success === true ? 'done' : step.success === false ? 'failed' : 'running';
      const failures = step.attempts.filter((a) => a.success === false).map((a) => a.error?.message ?? 'failed');
      const failed = failures.length > 0 ? ` (failed: ${failures.join('; ')})` : '';
      return `${state} after ${tries} attempt${tries === 1 ? '' : 's'}${failed}`;
    }
    case 'sleep':
      return step.finished ? 'slept' : `sleeping until ${formatTime(step.end)}`;
    case 'waitForEvent':
      if (step.error) return `timed out: ${step.error.message}`;
      return step.finished
        ? `received ${step.event_type ?? 'its event'}`
        : `waiting for ${step.event_type ?? 'an event'}`;
    case 'termination':
      return `terminated (${step.trigger.source})`;
  }
}

/** One instance: its status, params, output or error, and its step history; pause, resume and terminate. */
export function renderInstance(
  workflow: string,
  id: string,
  instance: InstanceView,
  actions: { act(action: 'pause' | 'resume' | 'terminate'): Promise<unknown> },
): HTMLElement {
  const status = notice();
  const act = (action: 'pause' | 'resume' | 'terminate', label: string) =>
    writeButton(label, async () => {
      if (action === 'terminate' && !(await confirmDialog(`Terminate the instance "${id}"?`, 'Terminate'))) return;
      actions.act(action).catch((error: unknown) => status.fail(error));
    });
  const steps = instance.steps.map((step) => [
    step.type === 'termination' ? '—' : step.name,
    step.type,
    'start' in step ? formatTime(step.start) : '',
    stepSummary(step),
    step.type === 'step' ? (step.output ?? '') : '',
  ]);
  const outcome = instance.error
    ? h('p', { class: 'error' }, `${instance.error.name}: ${instance.error.message}`)
    : h('pre', null, String(instance.output));
  return pageView(
    `Instance ${id}`,
    h('p', null, h('a', { href: href('workflows', workflow) }, `Workflow ${workflow}`), ` · ${instance.status}`),
    h(
      'p',
      { class: 'actions' },
      act('pause', 'Pause'),
      act('resume', 'Resume'),
      act('terminate', 'Terminate'),
      status.element,
    ),
    h('h3', null, 'Params'),
    h('pre', null, JSON.stringify(instance.params, null, 2)),
    h('h3', null, 'Output'),
    outcome,
    table(`Steps (${steps.length})`, ['Step', 'Type', 'Started', 'What happened', 'Output'], steps, 'No steps yet.'),
  );
}
