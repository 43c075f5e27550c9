import { clip } from '../shared/errors.ts';
import { WorkerErrors } from './errors.ts';
import type { Binding } from './schemas.ts';

/**
 * A Worker's `workflow` bindings, checked against each other: a Workflow the Worker runs is one class. (A
 * binding to a Workflow of another Worker, `script_name`, is checked against the account's Workers by the
 * upload.)
 */
export function checkWorkflowBindings(scriptName: string, bindings: readonly Binding[]): void {
  const classes = new Map<string, string>();
  for (const binding of bindings) {
    if (binding.type !== 'workflow') continue;
    if (binding.script_name !== undefined && binding.script_name !== scriptName) continue;
    const known = classes.get(binding.workflow_name);
    if (known !== undefined && known !== binding.class_name) {
      throw WorkerErrors.invalidScript(
        `The Workflow "${clip(binding.workflow_name)}" is bound to two classes ("${clip(known)}" and "${clip(binding.class_name)}"): a Workflow runs one class.`,
      );
    }
    classes.set(binding.workflow_name, binding.class_name);
  }
}

/** The Workers of other scripts this one's `workflow` bindings name (each must exist in the account). */
export function workflowTargets(
  scriptName: string,
  bindings: readonly Binding[],
): { binding: string; script: string }[] {
  return bindings.flatMap((b) =>
    b.type === 'workflow' && b.script_name !== undefined && b.script_name !== scriptName
      ? [{ binding: b.name, script: b.script_name }]
      : [],
  );
}
