import { enc, get, page, patch } from '../api.ts';
import { replace } from '../dom.ts';
import { acct } from '../state.ts';
import {
  renderInstance,
  renderWorkflow,
  renderWorkflows,
  type InstanceLine,
  type InstanceView,
  type Workflow,
} from './workflows.render.ts';

const workflowsPath = () => `${acct()}/workflows`;
const PER_PAGE = 25;

/** "Workflows": the list. */
export async function workflows(main: HTMLElement): Promise<void> {
  replace(main, renderWorkflows(await get<Workflow[]>(workflowsPath())));
}

/** One Workflow and a page of its instances. */
export async function workflow(main: HTMLElement, name: string, pageNumber = 1): Promise<void> {
  const base = `${workflowsPath()}/${enc(name)}`;
  const found = await get<Workflow>(base);
  const instances = await page<InstanceLine>(`${base}/instances`, pageNumber, PER_PAGE);
  replace(
    main,
    renderWorkflow(found, instances, (next) => void workflow(main, name, next)),
  );
}

/** One instance with its step history. */
export async function instance(main: HTMLElement, name: string, id: string): Promise<void> {
  const base = `${workflowsPath()}/${enc(name)}/instances/${enc(id)}`;
  const found = await get<InstanceView>(base);
  replace(
    main,
    renderInstance(name, id, found, {
      act: async (action) => {
        await patch(`${base}/status`, { status: action });
        await instance(main, name, id);
      },
    }),
  );
}
