import type { Reporter, TestCase } from 'vitest/node';

/**
 * Prints the plain closing line `N passed, N failed, N skipped` after a run, so that tools which read a
 * run's last line (CI dashboards here) understand vitest's result without parsing its own format.
 */
export default class SummaryReporter implements Reporter {
  #passed = 0;
  #failed = 0;
  #skipped = 0;

  onTestCaseResult(testCase: TestCase): void {
    const state = testCase.result().state;
    if (state === 'passed') this.#passed++;
    else if (state === 'failed') this.#failed++;
    else this.#skipped++;
  }

  onTestRunEnd(): void {
    process.stdout.write(`\n${this.#passed} passed, ${this.#failed} failed, ${this.#skipped} skipped\n`);
  }
}
