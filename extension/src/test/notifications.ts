// What a user of the installed extension sees and does outside the Chat view, for the runners that play
// the user's part (install.ts, bare.ts): notifications, and Add Agent's list.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { Page } from 'playwright-core';
import { retry } from './chatView';

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


/** Runs the command `title` from the command palette, for a command that opens a pick of its own at once (in
 * the same widget: `chatView.runCommand`, which waits for the palette to close, would wait on the pick). */
export async function openCommand(page: Page, title: string): Promise<void> {
  // Again until it takes: F1 does nothing before the workbench is ready, nor does the command before it is registered.
  await retry(page, UI_TIMEOUT_MS * 3, async () => {
    await page.keyboard.press('F1');
    const palette = page.locator('.quick-input-widget input');
    await palette.waitFor({ timeout: 10_000 });
    await palette.fill(`>${title}`);
    const row = page.locator(`.quick-input-list .monaco-list-row[aria-label^="${title}"]`).first();
    try {
      await row.waitFor({ timeout: 5_000 });
    } catch (error) {
      await page.keyboard.press('Escape');
      throw error;
    }
    await row.click();
  });
}

/**
 * Symposium: Sign In to an Agent, the agent `agent`, its method `method` (a key): types `key` in the key box
 * and waits for "Signed in to <agent>" (the notification centre left closed).
 */
export async function signInWithKey(page: Page, agent: string, method: string, key: string, timeout = UI_TIMEOUT_MS): Promise<void> {
  await openCommand(page, 'Symposium: Sign In to an Agent');
  // Which agent, when there are several; with one, its methods at once.
  const which = page.locator('.quick-input-widget', { hasText: 'sign in to which agent?' });
  const methodRow = page.locator('.quick-input-list .monaco-list-row', { hasText: method }).first();
  await which.or(methodRow).first().waitFor({ timeout: UI_TIMEOUT_MS });
  if (await which.isVisible()) {
    await page.locator('.quick-input-list .monaco-list-row', { hasText: agent }).first().click({ timeout: UI_TIMEOUT_MS });
  }
  await methodRow.click({ timeout });
  const input = page.locator('.quick-input-widget', { hasText: `${agent}: ${method}` }).locator('input[type="password"]');
  await input.waitFor({ timeout: UI_TIMEOUT_MS });
  await input.fill(key);
  await input.press('Enter');
  const center = page.locator('.notifications-center.visible');
  if (!(await center.isVisible())) {
    await page.locator('[id="status.notifications"]').click({ timeout: UI_TIMEOUT_MS });
    await center.waitFor({ timeout: UI_TIMEOUT_MS });
  }
  await center.locator('.notification-list-item', { hasText: `Signed in to ${agent}` }).first().waitFor({ timeout });
  await page.locator('[id="status.notifications"]').click({ timeout: UI_TIMEOUT_MS }); // closes the centre
  await center.waitFor({ state: 'hidden', timeout: UI_TIMEOUT_MS });
}
