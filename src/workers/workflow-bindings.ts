import { clip } from '../shared/errors.ts';
import { WorkerErrors } from './errors.ts';
import type { Binding } from './schemas.ts';

/**
 * A Worker's `workflow` bindings, checked against each other: a Workflow the Worker runs is one class, and a
 * binding to a Workflow of another Worker is refused for now (its instances run in that Worker's process,
 * which a binding of this one cannot reach yet), naming the binding.
 */
export function checkWorkflowBindings(scriptName: string, bindings: readonly Binding[]): void {
  const classes = new Map<string, string>();
  for (const binding of bindings) {
    if (binding.type !== 'workflow') continue;
    if (binding.script_name !== undefined && binding.script_name !== scriptName) {
      throw WorkerErrors.invalidScript(
        `Binding "${clip(binding.name)}" names the Workflow "${clip(binding.workflow_name)}" of the Worker "${clip(binding.script_name)}": Ledge runs a Workflow only for the Worker that exports its class; bind it there.`,
      );
    }
    const known = classes.get(binding.workflow_name);
    if (known !== undefined && known !== binding.class_name) {
      throw WorkerErrors.invalidScript(
        `The Workflow "${clip(binding.workflow_name)}" is bound to two classes ("${clip(known)}" and "${clip(binding.class_name)}"): a Workflow runs one class.`,
      );
    }
    classes.set(binding.workflow_name, binding.class_name);
  }
}
