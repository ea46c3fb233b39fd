// One sandbox: its graphs and its terminal (xterm's DOM renderer: rows are text).
import { expect, type Locator, type Page } from '@playwright/test';

export class DetailPage {
  readonly root: Locator;
  readonly terminal: Locator;
  readonly terminalStatus: Locator;
  readonly cpuValue: Locator;
  readonly memoryValue: Locator;

  constructor(readonly page: Page) {
    this.root = page.getByTestId('sandbox-detail');
    this.terminal = page.getByTestId('terminal');
    this.terminalStatus = page.getByTestId('terminal-status');
    this.cpuValue = page.getByTestId('chart-cpu-value');
    this.memoryValue = page.getByTestId('chart-memory-value');
  }

  async waitTerminal(): Promise<void> {
    await expect(this.terminalStatus).toHaveText('connected', { timeout: 30_000 });
    // The shell's prompt is there before anything is typed.
    await expect(this.terminal.locator('.xterm-rows')).toContainText(/[#$]\s*$/m, { timeout: 15_000 });
  }

  async type(text: string): Promise<void> {
    await this.terminal.locator('.xterm-helper-textarea').focus();
    await this.page.keyboard.type(text);
  }

  async press(key: string): Promise<void> {
    await this.terminal.locator('.xterm-helper-textarea').focus();
    await this.page.keyboard.press(key);
  }

  /** Pastes text as a person would (a paste event on xterm's textarea). */
  async paste(text: string): Promise<void> {
    await this.terminal.locator('.xterm-helper-textarea').evaluate((el, value) => {
      // (Browser globals, typed by hand: this folder's TypeScript has no DOM library.)
      const g = globalThis as unknown as {
        DataTransfer: new () => { setData(type: string, value: string): void };
        ClipboardEvent: new (type: string, init: object) => Event;
      };
      const data = new g.DataTransfer();
      data.setData('text/plain', value);
      el.dispatchEvent(new g.ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
    }, text);
  }

  /** The terminal's visible rows as text. */
  async screenText(): Promise<string> {
    return this.terminal.locator('.xterm-rows').innerText();
  }

  /** The CPU figure above the chart, in percent. */
  async cpuPercent(): Promise<number> {
    const text = (await this.cpuValue.textContent()) ?? '';
    return Number.parseFloat(text);
  }
}
