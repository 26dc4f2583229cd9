// What a user of the installed extension sees and does outside the Chat view, for the runners that play
// the user's part (install.ts, bare.ts): notifications, and Add Agent's list.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { Page } from 'playwright-core';

const UI_TIMEOUT_MS = 60_000;

/** Opens the notification centre (clicking the status bar's bell, as a user would). */
export async function openNotifications(page: Page): Promise<void> {
  const center = page.locator('.notifications-center.visible');
  if (!(await center.count())) {
    await page.locator('[id="status.notifications"]').click({ timeout: 60_000 });
  }
  await center.waitFor({ timeout: 10_000 });
}

/** Resolves with the text of the first notification containing `text` (bounded). */
export async function notification(page: Page, text: string, out: string, timeout = UI_TIMEOUT_MS): Promise<string> {
  const toast = page.locator('.notifications-center .notification-list-item', { hasText: text }).first();
  try {
    await toast.waitFor({ timeout });
  } catch (error) {
    await page.screenshot({ path: path.join(out, `notification-missing-${text.replace(/\W+/g, '-')}.png`) }).catch(() => undefined);
    fs.writeFileSync(path.join(out, `notification-missing-${text.replace(/\W+/g, '-')}.txt`), await page.locator('.notifications-center').innerText().catch(() => '(no centre)'));
    throw error;
  }
  return (await toast.innerText()).replace(/\s+/g, ' ');
}

/** Waits for Add Agent's list, then picks the row `label` as a user would. */
export async function pickInAddAgent(page: Page, label: string): Promise<string> {
  const widget = page.locator('.quick-input-widget', { hasText: 'Symposium: Add Agent' });
  await widget.waitFor({ timeout: UI_TIMEOUT_MS });
  const row = widget.locator('.quick-input-list .monaco-list-row', { hasText: label }).first();
  await row.waitFor({ timeout: 30_000 });
  const text = (await row.innerText()).replace(/\s+/g, ' ');
  await row.click();
  return text;
}

