// The control panel as a whole: sign-in, navigation, the engine banner, screenshots.
import { expect, type Locator, type Page } from '@playwright/test';
import { resolve } from 'node:path';
import type { WardenServe } from '../fixtures/warden-serve.js';
import { SandboxesPage } from './sandboxes-page.js';
import { DetailPage } from './detail-page.js';

const SCREENSHOTS = resolve(import.meta.dirname, '../screenshots');

export class AppPage {
  readonly sandboxes: SandboxesPage;
  readonly detail: DetailPage;
  readonly banner: Locator;
  readonly engineStatus: Locator;

  constructor(
    readonly page: Page,
    readonly serve: WardenServe,
    readonly runId: string,
  ) {
    this.sandboxes = new SandboxesPage(page, runId);
    this.detail = new DetailPage(page);
    this.banner = page.getByTestId('engine-banner');
    this.engineStatus = page.getByTestId('engine-status');
  }

  /** Signs in with the reusable UI token (the one-time link is the login spec's). */
  async signIn(): Promise<void> {
    const res = await this.page.request.post(`${this.serve.url}/ui/login`, { data: { code: this.serve.uiToken() } });
    expect(res.status(), await res.text()).toBe(204);
    await this.page.goto(this.serve.url);
    await this.waitConnected();
  }

  async waitConnected(): Promise<void> {
    await expect(this.engineStatus).toHaveAttribute('data-status', 'connected');
    await expect(this.banner).toHaveCount(0);
  }

  async go(view: 'sandboxes' | 'runs' | 'ledger'): Promise<void> {
    await this.page.getByTestId(`nav-${view}`).click();
  }

  /** Saves a screenshot of the current view, at the page's size, to e2e/screenshots/NAME.png (NAME may hold a folder). */
  async screenshot(name: string): Promise<void> {
    await this.page.screenshot({ path: resolve(SCREENSHOTS, `${name}.png`) });
  }
}
