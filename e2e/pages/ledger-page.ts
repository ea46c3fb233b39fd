// The ledger view: its header, the entries table, Verify and Export report.
import { expect, type Download, type Locator, type Page } from '@playwright/test';

export class LedgerPage {
  readonly view: Locator;
  readonly rows: Locator;
  readonly result: Locator;
  readonly progress: Locator;
  readonly size: Locator;
  readonly key: Locator;
  readonly filters: Locator;
  readonly exportDialog: Locator;
  readonly exportResult: Locator;

  constructor(readonly page: Page) {
    this.view = page.getByTestId('ledger-view');
    this.rows = page.getByTestId('ledger-row');
    this.result = page.getByTestId('verify-result');
    this.progress = page.getByTestId('verify-progress');
    this.size = page.getByTestId('ledger-size');
    this.key = page.getByTestId('ledger-key');
    this.filters = page.getByTestId('ledger-filters');
    this.exportDialog = page.getByTestId('export-dialog');
    this.exportResult = page.getByTestId('export-result');
  }

  async open(): Promise<void> {
    await this.page.getByTestId('nav-ledger').click();
    await expect(this.view).toBeVisible();
    await expect(this.size).toBeVisible();
  }

  row(seq: number): Locator {
    return this.page.locator(`[data-testid="ledger-row"][data-seq="${seq}"]`);
  }

  rowsOfKind(kind: string): Locator {
    return this.page.locator(`[data-testid="ledger-row"][data-kind="${kind}"]`);
  }

  details(seq: number): Locator {
    return this.page.locator(`[data-testid="ledger-details"][data-seq="${seq}"]`);
  }

  /** The inclusion proof of an open entry, as the page checked it. */
  proof(seq: number): Locator {
    return this.details(seq).getByTestId('ledger-proof');
  }

  /** Waits until the page has a verdict on entry seq's proof, and returns it (ok, pending, failed or error). */
  async proofStatus(seq: number): Promise<string> {
    let status = '';
    await expect
      .poll(async () => (status = (await this.proof(seq).getAttribute('data-status')) ?? ''), { timeout: 20_000 })
      .toMatch(/^(ok|pending|failed|error)$/);
    return status;
  }

  async entryCount(): Promise<number> {
    return Number((await this.size.innerText()).replace(/\D/g, ''));
  }

  async filter(name: 'sandbox' | 'runId' | 'kind' | 'actor', value: string): Promise<void> {
    const field = this.filters.locator(`[name="${name}"]`);
    if (name === 'kind' || name === 'actor') await field.selectOption(value);
    else await field.fill(value);
  }

  async clearFilters(): Promise<void> {
    await this.filters.getByRole('button', { name: 'Clear' }).click();
  }

  /** Presses Verify and waits for the verdict. */
  async verify(): Promise<void> {
    await this.view.getByRole('button', { name: 'Verify', exact: true }).click();
    await expect(this.result).toBeVisible({ timeout: 60_000 });
  }

  /** Exports a report (optionally scoped) and returns the two downloads: the JSON bundle and the HTML report. */
  async exportReport(scope: { sandbox?: string; from?: number; to?: number } = {}): Promise<{ json: Download; html: Download }> {
    await this.view.getByRole('button', { name: 'Export report' }).click();
    await expect(this.exportDialog).toBeVisible();
    if (scope.sandbox !== undefined) await this.exportDialog.locator('input[name=sandbox]').fill(scope.sandbox);
    if (scope.from !== undefined) await this.exportDialog.locator('input[name=fromSeq]').fill(String(scope.from));
    if (scope.to !== undefined) await this.exportDialog.locator('input[name=toSeq]').fill(String(scope.to));
    const downloads: Download[] = [];
    const bothSaved = new Promise<void>((resolve) => {
      const take = (d: Download) => {
        downloads.push(d);
        if (downloads.length === 2) {
          this.page.off('download', take);
          resolve();
        }
      };
      this.page.on('download', take);
    });
    await this.exportDialog.getByRole('button', { name: 'Export' }).click();
    await expect(this.exportResult).toHaveAttribute('data-phase', 'done', { timeout: 60_000 });
    await bothSaved;
    const json = downloads.find((d) => d.suggestedFilename().endsWith('.json'));
    const html = downloads.find((d) => d.suggestedFilename().endsWith('.html'));
    if (!json || !html)
      throw new Error(`expected a .json and an .html download, got ${downloads.map((d) => d.suggestedFilename()).join(', ')}`);
    return { json, html };
  }
}
