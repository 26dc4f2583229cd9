// "Symposium: Continue an Agent Session" in the real Chat view, as a user runs it: Claude Code (its real
// ACP adapter, its model API faked) had a session of its own in the workspace, started outside VS Code;
// the command lists it, opens a chat for it, and what the user types there goes on in that session;
// its first question edited goes on from the session as it was.

import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { Page } from 'playwright-core';
import { ChatView, pickedModel } from './chatView';
import { FakeAgent, Repository } from './fakeAgent';

const UI_MS = 20_000;
const ANSWER_MS = 60_000;
const VIEW = '.part.auxiliarybar';
export const CONTINUE_AGENT = { id: 'claude-fake', name: 'Claude (fake API)' };
const REMEMBERED = 'Remember the number 42';
const QUESTION = 'What number did I say?';
const EDITED = 'What number did I say, doubled?';

/** Picks the command in the command palette; its own quick picks follow. */
export async function startCommand(page: Page, title: string): Promise<void> {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ timeout: UI_MS });
  await input.fill(`>${title}`);
  await page.locator(`.quick-input-list .monaco-list-row:is([aria-label="${title}"], [aria-label^="${title}, "])`).first().click({ timeout: UI_MS });
}

/** The agent, with its session outside VS Code already had in `workspace`. */
export function prepareContinue(repository: Repository, workspace: string): Promise<FakeAgent> {
  return FakeAgent.start('claude', repository, { folder: workspace, prompt: REMEMBERED });
}

export async function runContinueViewTest(page: Page, fake: FakeAgent, options: { out: string; print(line: string): void }): Promise<{ passed: number; failed: number }> {
  const name = 'Continue an Agent Session: a Claude Code session started outside VS Code goes on in a new chat, its first question edited too';
  const started = Date.now();
  try {
    // A window opened anew: Copilot Chat enabled again, our models listed in its picker.
    const chat = new ChatView(page);
    await chat.enableCopilotAndPick(CONTINUE_AGENT.name, path.join(options.out, 'continue-window.png'));
    const rows = page.locator('.quick-input-widget .monaco-list-row');
    await startCommand(page, 'Symposium: Continue an Agent Session');
    await rows.filter({ hasText: CONTINUE_AGENT.name }).first().click({ timeout: UI_MS }); // whose session
    await rows.filter({ hasText: 'Fake title' }).first().click({ timeout: ANSWER_MS }); // the session, by its title
    const view = page.locator(VIEW);
    await view.locator('.interactive-request', { hasText: `Continue the ${CONTINUE_AGENT.name} session` }).first().waitFor({ timeout: UI_MS });
    await pickedModel(page, CONTINUE_AGENT.name).waitFor({ timeout: UI_MS });
    const answer = await chat.send(QUESTION);
    const asked = await fake.request((r) => r.userTexts.includes(QUESTION));
    assert.ok(asked.userTexts.includes(REMEMBERED), `the model saw the session's history: ${JSON.stringify(asked.userTexts)}`);
    assert.ok(!asked.userTexts.some((t) => t.includes('Continue the')), 'the opening exchange stayed in VS Code');
    assert.match(answer.text, /\(unscripted\)/);
    // The first question edited: answered from the session as the user left it (docs/DESIGN.md, "Forks").
    const edited = await chat.edit(QUESTION, EDITED);
    assert.match(edited.text, /\(unscripted\)/);
    const again = await fake.request((r) => r.userTexts.includes(EDITED));
    assert.ok(again.userTexts.includes(REMEMBERED), `the model saw the session's history: ${JSON.stringify(again.userTexts)}`);
    assert.ok(!again.userTexts.includes(QUESTION), `and not the question the edit replaced: ${JSON.stringify(again.userTexts)}`);
    options.print(`    ✔ ${name} (${Date.now() - started}ms)`);
    return { passed: 1, failed: 0 };
  } catch (error) {
    const picture = path.join(options.out, 'continue-view-failed.png');
    await page.screenshot({ path: picture }).catch(() => undefined);
    options.print(`    ✖ ${name}\n      ${error instanceof Error ? error.message.split('\n').join('\n      ') : error}\n      (${picture})`);
    return { passed: 0, failed: 1 };
  }
}
