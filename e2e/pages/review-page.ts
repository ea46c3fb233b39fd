// A sandbox's review in its detail view: the Changes and Snapshots tabs, and the snapshot dialogs.
import { expect, type Locator, type Page } from '@playwright/test';

export class ReviewPage {
  readonly changes: Locator;
  readonly snapshots: Locator;
  readonly tagInput: Locator;
  readonly progress: Locator;
  readonly done: Locator;
  readonly error: Locator;

  constructor(readonly page: Page) {
    this.changes = page.getByTestId('sandbox-changes');
    this.snapshots = page.getByTestId('snapshots');
    this.tagInput = page.getByTestId('snapshot-tag');
    this.progress = page.getByTestId('snapshot-progress');
    this.done = page.getByTestId('snapshot-done');
    this.error = page.getByTestId('snapshot-error');
  }

  async tab(name: 'shell' | 'changes' | 'snapshots'): Promise<void> {
    await this.page.getByTestId(`detail-tab-${name}`).click();
    await expect(this.page.getByTestId(`detail-tab-${name}`)).toHaveAttribute('aria-selected', 'true');
  }

  /** One file's unified diff in the Changes tab. */
  diff(path: string): Locator {
    return this.changes.locator(`[data-testid="sandbox-changes-diff"][data-path="${path}"]`);
  }

  split(path: string): Locator {
    return this.changes.locator(`[data-testid="sandbox-changes-split"][data-path="${path}"]`);
  }

  row(tag: string): Locator {
    return this.snapshots.locator(`[data-testid="snapshot-row"][data-tag="${tag}"]`);
  }

  async take(tag: string): Promise<void> {
    await this.tagInput.fill(tag);
    await this.page.getByTestId('snapshot-take').click();
    await expect(this.row(tag)).toBeVisible({ timeout: 60_000 });
  }

  dialog(kind: 'reset' | 'fork' | 'remove'): Locator {
    return this.page.getByTestId(`snapshot-${kind}-dialog`);
  }

  async ask(kind: 'reset' | 'fork' | 'remove', tag: string): Promise<Locator> {
    await this.row(tag).getByTestId(`snapshot-${kind}`).click();
    await expect(this.dialog(kind)).toBeVisible();
    return this.dialog(kind);
  }
}
