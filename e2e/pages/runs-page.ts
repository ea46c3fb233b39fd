// The Runs view (run list, a run's budgets and timeline) and the approval prompts shown everywhere.
import { expect, type Locator, type Page } from '@playwright/test';

export type ApprovalAnswer = 'approve-once' | 'approve-run' | 'deny';

export class RunsPage {
  readonly view: Locator;
  readonly count: Locator;
  readonly empty: Locator;
  readonly list: Locator;
  readonly detail: Locator;
  readonly timeline: Locator;
  readonly approvalsPanel: Locator;
  readonly approvalsBadge: Locator;

  constructor(readonly page: Page) {
    this.view = page.getByTestId('runs-view');
    this.count = page.getByTestId('run-count');
    this.empty = page.getByTestId('runs-empty');
    this.list = page.getByTestId('run-list');
    this.detail = page.getByTestId('run-detail');
    this.timeline = page.getByTestId('timeline');
    this.approvalsPanel = page.getByTestId('approvals-panel');
    this.approvalsBadge = page.getByTestId('approvals-badge');
  }

  async open(): Promise<void> {
    await this.page.getByTestId('nav-runs').click();
    await expect(this.view).toBeVisible();
  }

  /** The run of an agent in the list (each spec's agents have names of their own). */
  row(agent: string): Locator {
    return this.page.locator(`[data-testid="run-row"][data-agent="${agent}"]`);
  }

  async select(agent: string): Promise<void> {
    await this.row(agent).click();
    await expect(this.row(agent)).toHaveAttribute('aria-current', 'true');
    await expect(this.detail).toBeVisible();
  }

  /** The call at a 1-based position in the selected run's timeline. */
  call(index: number): Locator {
    return this.detail.locator(`[data-testid="call"][data-index="${index}"]`);
  }

  calls(): Locator {
    return this.detail.getByTestId('call');
  }

  gauge(id: 'steps' | 'wall' | 'output' | 'breaker'): Locator {
    return this.detail.getByTestId(`gauge-${id}`);
  }

  /** A pending approval prompt, found by what it asks. */
  approval(text: string): Locator {
    return this.page.getByTestId('approval').filter({ hasText: text });
  }

  async answer(approval: Locator, answer: ApprovalAnswer): Promise<void> {
    await approval.getByTestId(`approval-${answer}`).click();
    await expect(approval).toHaveCount(0);
  }
}
