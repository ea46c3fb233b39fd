// The sandbox list and its dialogs.
import { expect, type Locator, type Page } from '@playwright/test';
import { TEST_LABEL_KEY } from '../fixtures/podman.js';

export interface CreateOptions {
  name: string;
  memory?: string;
  cpus?: string;
  network?: 'none' | 'nat';
  env?: string;
  ttl?: string;
}

export class SandboxesPage {
  readonly dialog: Locator;
  readonly destroyDialog: Locator;

  constructor(
    readonly page: Page,
    readonly runId: string,
  ) {
    this.dialog = page.getByTestId('create-dialog');
    this.destroyDialog = page.getByTestId('destroy-dialog');
  }

  /** A name unique to this run. */
  name(suffix: string): string {
    return `${this.runId}-${suffix}`;
  }

  row(name: string): Locator {
    return this.page.locator(`[data-testid="sandbox-row"][data-name="${name}"]`);
  }

  async openCreateDialog(): Promise<void> {
    await this.page.getByTestId('nav-sandboxes').click();
    await this.page.getByRole('button', { name: 'New sandbox' }).click();
    await expect(this.dialog).toBeVisible();
  }

  async fillCreateDialog(options: CreateOptions): Promise<void> {
    const d = this.dialog;
    await d.locator('input[name=name]').fill(options.name);
    if (options.memory !== undefined) await d.locator('input[name=memory]').fill(options.memory);
    if (options.cpus !== undefined) await d.locator('input[name=cpus]').fill(options.cpus);
    if (options.network) await d.locator('select[name=network]').selectOption(options.network);
    if (options.env !== undefined) await d.locator('textarea[name=env]').fill(options.env);
    if (options.ttl !== undefined) await d.locator('input[name=ttl]').fill(options.ttl);
    // Every sandbox of the suite is labelled with its run, so a crashed run's leftovers are swept.
    await d.locator('textarea[name=labels]').fill(`${TEST_LABEL_KEY}=${this.runId}`);
  }

  async submitCreateDialog(): Promise<void> {
    await this.dialog.getByRole('button', { name: 'Create and start' }).click();
  }

  /** Creates a sandbox through the dialog and waits until its row says running. */
  async create(options: CreateOptions): Promise<Locator> {
    await this.openCreateDialog();
    await this.fillCreateDialog(options);
    await this.submitCreateDialog();
    await expect(this.dialog).toHaveCount(0, { timeout: 60_000 });
    const row = this.row(options.name);
    await expect(row).toHaveAttribute('data-state', 'running', { timeout: 30_000 });
    return row;
  }

  async openDestroyDialog(name: string): Promise<void> {
    await this.row(name)
      .getByRole('button', { name: `Destroy ${name}` })
      .click();
    await expect(this.destroyDialog).toBeVisible();
  }

  async confirmDestroy(): Promise<void> {
    await this.destroyDialog.getByTestId('confirm-destroy').click();
    await expect(this.destroyDialog).toHaveCount(0, { timeout: 30_000 });
  }

  async open(name: string): Promise<void> {
    await this.row(name).locator('.name-text').click();
    await expect(this.page.getByTestId('sandbox-detail')).toBeVisible();
  }
}
