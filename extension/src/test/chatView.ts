// Tests in the real Chat view: code-server's built-in GitHub Copilot Chat, our models picked in its
// model picker, driven from outside by Playwright as a user would (type, click, read). Copilot Chat
// is disabled on first start; "Extensions: Enable All Extensions" enables it, and then its Agent, Ask
// and Plan modes work offline, without signing in, with our models.
//
// Every wait is on something the user would see, and bounded.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Locator, Page } from 'playwright-core';

/** How long an answer may take: Eliza answers in milliseconds, but the machine may be busy. */
const ANSWER_MS = 60_000;
/** How long a menu, a picker or a card may take to show. */
const UI_MS = 20_000;

const HELLO_REPLY = 'How do you do. Please state your problem.';
const VIEW = '.part.auxiliarybar';

export interface ChatViewOptions {
  /** Where the screenshots go: model-picker.png and copilot-agent-mode.png. */
  screenshots: string;
  /** Where a failed test leaves its screenshot. */
  out: string;
  /** One line of the report. */
  print(line: string): void;
}

export async function runChatViewTests(page: Page, options: ChatViewOptions): Promise<{ passed: number; failed: number }> {
  const chat = new ChatView(page);
  const tests: ViewTest[] = [
    ['Copilot Chat is enabled, and Eliza picked in its model picker', async () => {
      await chat.enableCopilotAndPick('Eliza (Symposium)', path.join(options.screenshots, 'model-picker.png'));
    }],
    ['Agent mode: Eliza answers what the user typed, turn after turn', async () => {
      await chat.newChat('Agent');
      const first = await chat.send('Hello, I feel sad');
      options.print(`    time to the first answer text (Agent mode): ${first.firstTextMs} ms`);
      assert.equal(first.text, HELLO_REPLY);
      const second = await chat.send('I am sad');
      options.print(`    time to the first answer text (Agent mode, second turn): ${second.firstTextMs} ms`);
      assert.match(second.text, /\bsad\b/, 'she reflects what was said');
    }],
    ['Agent mode: Allow Once lets Eliza run the command', async () => {
      await chat.newChat('Agent');
      const card = await chat.sendAndConfirm('run ls');
      await chat.picture(path.join(options.screenshots, 'copilot-agent-mode.png'));
      await card.allowOnce();
      const answer = await chat.answer();
      assert.match(answer.text, /I ran ls\b/);
    }],
    ['Agent mode: Skip tells Eliza no, and she goes on', async () => {
      await chat.newChat('Agent');
      const card = await chat.sendAndConfirm('run ls');
      await card.skip();
      const answer = await chat.answer();
      assert.match(answer.text, /You did not let me run ls\b/);
      assert.doesNotMatch(answer.text, /I ran/);
      assert.equal((await chat.send('Hello')).text, HELLO_REPLY, 'the conversation goes on');
    }],
    ['Agent mode: a new message while the card is shown is answered', async () => {
      await chat.newChat('Agent');
      await chat.sendAndConfirm('run ls');
      const answer = await chat.send('Hello');
      assert.equal(answer.text, HELLO_REPLY);
      assert.equal(await chat.cardShown(), false, 'the abandoned card is gone');
    }],
    ['Ask mode: Eliza answers', async () => {
      await chat.newChat('Ask');
      const answer = await chat.send('Hello');
      options.print(`    time to the first answer text (Ask mode): ${answer.firstTextMs} ms`);
      assert.equal(answer.text, HELLO_REPLY);
    }],
    ['Plan mode: Eliza answers', async () => {
      await chat.newChat('Plan');
      const answer = await chat.send('I am unhappy');
      options.print(`    time to the first answer text (Plan mode): ${answer.firstTextMs} ms`);
      assert.match(answer.text, /\bunhappy\b/);
    }],
  ];

  // Without Copilot Chat and Eliza (the first test), the other tests cannot run.
  return runViewTests(page, options, 'The Chat view with GitHub Copilot Chat', 'chat-view', tests, async (index) => index === 0);
}

/** One test of a view: its name, and what it does as a user would. */
export type ViewTest = [string, () => Promise<void>];

/**
 * Runs a view's tests in order, printing one line each; a failed test leaves its screenshot as
 * `<prefix>-<n>-failed.png` in `options.out`, then `afterFailure` says whether to stop there.
 * VIEW_TESTS (a regular expression) runs only the tests whose names match: for working on a few.
 */
export async function runViewTests(
  page: Page,
  options: { out: string; print(line: string): void },
  heading: string,
  prefix: string,
  tests: ViewTest[],
  afterFailure: (index: number) => Promise<boolean>,
): Promise<{ passed: number; failed: number }> {
  let passed = 0;
  let failed = 0;
  options.print(`  ${heading}`);
  const only = process.env.VIEW_TESTS ? new RegExp(process.env.VIEW_TESTS) : undefined;
  for (const [index, [name, test]] of tests.entries()) {
    if (only && !only.test(name)) {
      continue;
    }
    const started = Date.now();
    try {
      await test();
      passed++;
      options.print(`    ✔ ${name} (${Date.now() - started}ms)`);
    } catch (error) {
      failed++;
      const picture = path.join(options.out, `${prefix}-${index + 1}-failed.png`);
      await page.screenshot({ path: picture }).catch(() => undefined);
      options.print(`    ✖ ${name}\n      ${error instanceof Error ? error.message.split('\n').join('\n      ') : error}\n      (${picture})`);
      if (await afterFailure(index)) {
        break;
      }
    }
  }
  return { passed, failed };
}

interface Answer {
  /** What the user reads in the newest answer, status lines and all. */
  text: string;
  /** From pressing Enter to the first text of the answer. */
  firstTextMs: number;
}

/**
 * The first text part of `scope` a user can see (holding `words`, if given): Copilot may fold the
 * rounds before the last, text and all, hidden under "Completed N steps".
 */
function shownText(scope: Locator, words?: RegExp): Locator {
  return scope.locator('.value .chat-markdown-part.rendered-markdown', words ? { hasText: words } : {}).filter({ visible: true }).first();
}

/** The Chat view in the secondary side bar, and what a user does there. */
export class ChatView {
  private readonly view: Locator;

  constructor(private readonly page: Page) {
    this.view = page.locator(VIEW);
  }

  /**
   * Enables Copilot Chat, opens the model picker, takes its picture, picks `name`. Our models are
   * listed once Copilot Chat is active (it activates our extension); until then the picker offers only
   * a sign-in. The command does nothing when run before the workbench knows its extensions, so it is
   * run again until the picker lists `name`.
   */
  async enableCopilotAndPick(name: string, picture: string): Promise<void> {
    await this.view.locator('.interactive-input-part').first().waitFor({ timeout: UI_MS });
    const rows = this.page.locator('.action-widget .monaco-list-row');
    const row = rows.filter({ hasText: name }).first();
    await retry(this.page, UI_MS * 9, async () => {
      await runCommand(this.page, 'Extensions: Enable All Extensions');
      await retry(this.page, UI_MS, async () => {
        await this.view.locator('.model-picker-name').first().click();
        try {
          await rows.first().waitFor({ timeout: UI_MS });
          const other = rows.filter({ hasText: 'Other Models' }).first();
          if ((await row.count()) === 0 && (await other.count()) > 0) {
            await other.click();
          }
          await row.waitFor({ timeout: 2_000 });
        } catch (error) {
          // Closed, so that no key meant for something else picks its "Sign in to use Copilot".
          await this.page.keyboard.press('Escape');
          await rows.first().waitFor({ state: 'hidden', timeout: UI_MS });
          throw error;
        }
      });
    });
    await this.page.mouse.move(600, 200); // off the list, so that no row's hover card covers the editor
    await this.page.locator('.workbench-hover-container, .monaco-hover').first().waitFor({ state: 'hidden', timeout: UI_MS });
    fs.mkdirSync(path.dirname(picture), { recursive: true });
    await this.page.screenshot({ path: picture });
    await row.click();
    await pickedModel(this.page, name).waitFor({ timeout: UI_MS });
  }

  /** Picks the model `name` in the model picker (Copilot Chat already enabled), unless it is picked; with
   * `description`, the row that also shows it (an agent's own row, "ACP agent", not its models'). */
  async pick(name: string, description?: string): Promise<void> {
    const picked = pickedModel(this.page, name);
    if (await picked.isVisible()) {
      return;
    }
    // A notification list left open (an earlier sign-in's) covers the picker: closed, as a user would.
    const centre = this.page.locator('.notifications-center.visible');
    if (await centre.isVisible()) {
      await this.page.locator('[id="status.notifications"]').click({ timeout: UI_MS });
      await centre.waitFor({ state: 'hidden', timeout: UI_MS });
    }
    const rows = this.page.locator('.action-widget .monaco-list-row');
    // The list shows only the rows that fit: a model far down is found by searching, as a user does.
    const search = this.page.locator('.action-widget input[placeholder="Search models"]');
    await retry(this.page, UI_MS * 3, async () => {
      await this.view.locator('.model-picker-name').first().click();
      try {
        await rows.first().waitFor({ timeout: UI_MS });
        if ((await search.count()) > 0) {
          await search.first().fill(name);
        } else {
          const other = rows.filter({ hasText: 'Other Models' }).first();
          if ((await rows.filter({ hasText: name }).count()) === 0 && (await other.count()) > 0) {
            await other.click();
          }
        }
        await rows.filter({ hasText: name }).filter({ hasText: description ?? name }).first().click({ timeout: 5_000 });
      } catch (error) {
        // Closed, so that the next try's click on the picker is not blocked by the open list.
        await this.page.keyboard.press('Escape');
        throw error;
      }
      await picked.waitFor({ timeout: 5_000 });
    });
  }

  /** A new, empty chat in `mode` (Agent, Ask or Plan). */
  async newChat(mode: string): Promise<void> {
    // On an empty chat, "New Chat" replaces the session a moment later: what is sent by then is lost.
    if ((await this.view.locator('.interactive-request').count()) > 0) {
      await this.view.locator('a.action-label[aria-label^="New Chat"]').first().click();
      await this.view.locator('.interactive-request').first().waitFor({ state: 'detached', timeout: UI_MS });
    }
    const picker = this.view.locator('.interactive-input-part')
      .locator(['Agent', 'Ask', 'Plan'].map((m) => `a.action-label[aria-label="${m}"]`).join(', '));
    const rows = this.page.locator('.action-widget .monaco-list-row');
    // The new session re-renders the input a moment later, which closes an open picker: try again.
    await retry(this.page, UI_MS * 3, async () => {
      if ((await picker.getAttribute('aria-label', { timeout: UI_MS })) === mode) {
        return;
      }
      if (await rows.first().isVisible()) {
        await this.page.keyboard.press('Escape');
        await rows.first().waitFor({ state: 'hidden', timeout: UI_MS });
      }
      await picker.click();
      await rows.filter({ hasText: mode }).first().click({ timeout: 5_000 });
      await this.view.locator(`.interactive-input-part a.action-label[aria-label="${mode}"]`).waitFor({ timeout: 5_000 });
    });
  }

  /** Types `text` in the chat's input and sends it; resolves with the finished answer. */
  async send(text: string): Promise<Answer> {
    const before = await this.responses().count();
    const sent = await this.type(text);
    return this.answer(before, sent);
  }

  /** Sends `text` and resolves with the answer's whole text once it reads `shown` (an error, say). */
  async sendUntil(text: string, shown: RegExp): Promise<string> {
    const before = await this.responses().count();
    await this.type(text);
    const response = this.responses().nth(before);
    await response.filter({ hasText: shown }).waitFor({ timeout: ANSWER_MS });
    return (await response.innerText()).trim();
  }

  /**
   * Sends `text`, waits for the answer to show `shown`, presses Stop; resolves with what the answer
   * reads once it has stopped.
   */
  async sendAndStop(text: string, shown: RegExp): Promise<string> {
    const before = await this.responses().count();
    await this.type(text);
    const response = this.responses().nth(before);
    await shownText(response, shown).waitFor({ timeout: ANSWER_MS });
    await this.view.locator('.interactive-input-part').locator('a.action-label:is([aria-label^="Cancel"], [aria-label^="Stop"])').first().click({ timeout: UI_MS });
    await this.view.locator('.interactive-response.chat-response-loading').first().waitFor({ state: 'detached', timeout: ANSWER_MS });
    return (await response.locator('.value').innerText()).trim();
  }

  /**
   * Sends `text`, allows once every confirmation card the answer shows (if any), and resolves with
   * the finished answer's text.
   */
  async sendAllowingAny(text: string): Promise<string> {
    const before = await this.responses().count();
    await this.type(text);
    const card = new Card(this.page, this.view);
    const loading = this.view.locator('.interactive-response.chat-response-loading').first();
    const response = this.responses().nth(before);
    await response.waitFor({ timeout: UI_MS });
    for (let cards = 0; cards < 5; cards++) { // bounded: an agent may ask more than once
      const next = await Promise.race([
        loading.waitFor({ state: 'detached', timeout: ANSWER_MS }).then(() => 'done', () => 'timeout'),
        card.skipButton.waitFor({ timeout: ANSWER_MS }).then(() => 'card', () => 'timeout'),
      ]);
      if (next === 'timeout') {
        throw new Error(`the answer to "${text}" neither finished nor asked within ${ANSWER_MS} ms`);
      }
      if (next === 'done') {
        break;
      }
      await card.allowOnce();
    }
    return (await response.locator('.value').innerText()).trim();
  }

  /** Sends `text` and waits for the confirmation card it leads to. */
  /** Sends `text` and waits until Copilot stops the turn at its request limit ("Continue to iterate?"). */
  async sendUntilContinue(text: string): Promise<void> {
    await this.type(text);
    await this.view.getByRole('button', { name: 'Continue' }).filter({ visible: true }).first().waitFor({ timeout: ANSWER_MS });
  }

  /**
   * Sends `text` and presses Copilot's Continue each time its request limit stops the turn, until the
   * answer shows `done`; resolves with the number of Continues pressed. Between two Continues go
   * `chat.agent.maxRequests` rounds: the wait is bounded per round, by `progress` (what grows with
   * each round, e.g. the model requests the fake API received) standing still for ANSWER_MS.
   */
  async sendThroughContinues(text: string, done: RegExp, progress: () => number): Promise<number> {
    await this.type(text);
    const finished = shownText(this.responses(), done);
    const button = this.view.getByRole('button', { name: 'Continue' }).filter({ visible: true }).first();
    let pressed = 0;
    for (;;) {
      let seen = progress();
      for (;;) {
        try {
          await finished.or(button).first().waitFor({ timeout: ANSWER_MS });
          break;
        } catch (error) {
          if (progress() === seen) {
            throw error; // no round in ANSWER_MS
          }
          seen = progress();
        }
      }
      if (await finished.isVisible()) {
        await this.view.locator('.interactive-response.chat-response-loading').first().waitFor({ state: 'detached', timeout: ANSWER_MS });
        return pressed;
      }
      await button.click({ timeout: UI_MS });
      pressed += 1;
      await button.waitFor({ state: 'hidden', timeout: UI_MS }); // answered: the next limit shows a new one
    }
  }

  /** Sends `text` and waits for Copilot's question carousel (an agent's question); returns it. */
  async sendAndQuestion(text: string): Promise<Locator> {
    await this.type(text);
    const carousel = this.view.locator('.chat-question-carousel-container').filter({ visible: true }).last();
    await carousel.waitFor({ timeout: ANSWER_MS });
    return carousel;
  }

  async sendAndConfirm(text: string): Promise<Card> {
    await this.type(text);
    const card = new Card(this.page, this.view);
    await card.waitShown();
    return card;
  }

  /**
   * The newest answer, once it has finished: the response after the `before`th, its first text timed
   * from `sent` (Date.now() when Enter was pressed), the first the user can see (`shownText`).
   */
  async answer(before?: number, sent?: number): Promise<Answer> {
    const index = before ?? (await this.responses().count()) - 1;
    const response = this.responses().nth(index);
    const text = shownText(response);
    await text.waitFor({ timeout: ANSWER_MS });
    const firstTextMs = sent === undefined ? 0 : Date.now() - sent;
    await this.view.locator('.interactive-response.chat-response-loading').first().waitFor({ state: 'detached', timeout: ANSWER_MS });
    return { text: (await response.locator('.value').innerText()).trim(), firstTextMs };
  }

  /**
   * Edits the request that reads `oldText` as a user does (VS Code's default `chat.editRequests`,
   * "inline": a click on the request opens it for editing in place), sends `newText` instead, and
   * resolves with the answer to it. The requests after it leave the chat.
   */
  async edit(oldText: string, newText: string): Promise<Answer> {
    const request = this.view.locator('.interactive-request', { hasText: oldText }).last();
    const editor = this.view.locator('.interactive-request .interactive-input-editor .monaco-editor').first();
    await retry(this.page, UI_MS * 3, async () => {
      await request.locator('.value').first().click({ timeout: UI_MS });
      await editor.waitFor({ timeout: 5_000 });
    });
    await editor.click();
    await this.page.keyboard.press('ControlOrMeta+A');
    await this.page.keyboard.type(newText);
    await this.page.keyboard.press('Enter');
    // The list's rows are not in the page in the order shown once rows left it: the answer is the
    // row after the edited request's, by the list's own index.
    const row = this.view.locator('.monaco-list-row').filter({ has: this.page.locator('.interactive-request', { hasText: newText }) }).first();
    await row.waitFor({ timeout: UI_MS });
    const index = Number(await row.getAttribute('data-index'));
    const response = this.view.locator(`.monaco-list-row[data-index="${index + 1}"] .interactive-response`).first();
    await shownText(response).waitFor({ timeout: ANSWER_MS });
    await this.view.locator('.interactive-response.chat-response-loading').first().waitFor({ state: 'detached', timeout: ANSWER_MS });
    return { text: (await response.locator('.value').innerText()).trim(), firstTextMs: 0 };
  }

  async cardShown(): Promise<boolean> {
    return (await this.view.locator('.chat-confirmation-widget-buttons').filter({ visible: true }).count()) > 0;
  }

  /**
   * A picture of the chat as it is, from its newest request down: the side bar maximized for it (and
   * Copilot's notice about utility models dismissed, when it shows), then restored.
   */
  async picture(file: string): Promise<void> {
    const notice = this.view.locator('a[aria-label="Dismiss notification"]').filter({ visible: true });
    if (await notice.count()) {
      await notice.first().click();
    }
    await this.view.locator('a.action-label[aria-label^="Maximize Secondary Side Bar"]').click();
    const restore = this.view.locator('a.action-label[aria-label^="Restore Secondary Side Bar"]');
    await restore.waitFor({ timeout: UI_MS });
    const chat = await this.view.locator('.interactive-session').filter({ visible: true }).first().boundingBox();
    const request = await this.view.locator('.interactive-request').last().boundingBox();
    assert.ok(chat && request, 'the chat is on the screen');
    const top = Math.max(chat.y, request.y - 12);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    await this.page.screenshot({
      path: file,
      clip: { x: chat.x, y: top, width: chat.width, height: chat.y + chat.height - top },
      style: '.scrollbar { visibility: hidden !important; }', // shown for a moment after the new layout
    });
    await restore.click();
    await this.view.locator('a.action-label[aria-label^="Maximize Secondary Side Bar"]').waitFor({ timeout: UI_MS });
  }

  /** Types `text` after what the chat input holds already (a command put it there), sends it, and
   * resolves with the answer once the request reads `shown`. */
  async sendAfterInput(text: string, shown: string): Promise<Answer> {
    const before = await this.responses().count();
    await this.page.keyboard.type(text);
    const sent = Date.now();
    await this.page.keyboard.press('Enter');
    await this.view.locator('.interactive-request .value', { hasText: shown }).last().waitFor({ timeout: UI_MS });
    return this.answer(before, sent);
  }

  /** Sends one of the chat's own commands (`/compact`): its first Enter takes the completion VS Code
   * suggests for it, the next one sends it. */
  async sendCommand(text: string): Promise<Answer> {
    const before = await this.responses().count();
    await this.view.locator('.interactive-input-editor .monaco-editor').first().click();
    await this.page.keyboard.type(text);
    const request = this.view.locator('.interactive-request .value', { hasText: text }).last();
    await retry(this.page, UI_MS, async () => {
      await this.page.keyboard.press('Enter');
      await request.waitFor({ timeout: 2_000 });
    });
    return this.answer(before);
  }

  /** The newest answer, as the page shows it. */
  lastResponse(): Locator {
    return this.responses().last();
  }

  /** What the chat input holds. */
  async input(): Promise<string> {
    return (await this.view.locator('.interactive-input-editor .view-lines').first().innerText()).replace(/\u00a0/g, ' ');
  }

  private responses(): Locator {
    return this.view.locator('.interactive-item-container.interactive-response');
  }

  private async type(text: string): Promise<number> {
    await this.view.locator('.interactive-input-editor .monaco-editor').first().click();
    await this.page.keyboard.type(text);
    const sent = Date.now();
    await this.page.keyboard.press('Enter');
    await this.view.locator('.interactive-request .value', { hasText: text }).last().waitFor({ timeout: UI_MS });
    return sent;
  }
}

/**
 * The model picker's button, with `name` picked. Its label names the model, but where the chat input is
 * too narrow for the name beside the model's control (its options) VS Code shows only an icon there;
 * its accessible name always names it.
 */
export function pickedModel(page: Page, name: string): Locator {
  return page.locator(`${VIEW} .model-picker-name[aria-label*=${JSON.stringify(name)}]`).first();
}

/** VS Code's confirmation card for our tool: "Allow in this Session" (split: Allow Once, ...) and "Skip". */
export class Card {
  private readonly buttons: Locator;
  readonly skipButton: Locator;

  constructor(private readonly page: Page, private readonly view: Locator) {
    this.buttons = view.locator('.chat-confirmation-widget-buttons').filter({ visible: true });
    this.skipButton = this.buttons.locator('a.monaco-button', { hasText: 'Skip' });
  }

  /** What the card says, as the user reads it. */
  async text(): Promise<string> {
    return this.view.locator('.chat-confirmation-widget-message').filter({ visible: true }).last().innerText();
  }

  async waitShown(): Promise<void> {
    await this.skipButton.waitFor({ timeout: ANSWER_MS });
  }

  /** Allow Once, from the primary button's menu: the primary button allows the whole session. */
  async allowOnce(): Promise<void> {
    await this.buttons.locator('.monaco-dropdown-button').click();
    const item = this.page.locator('.context-view .action-menu-item', { hasText: 'Allow Once' });
    // A mouse click on the menu's items does nothing here, Enter does; hovering an item focuses it.
    await item.hover({ timeout: UI_MS });
    await this.page.locator('.context-view .action-menu-item:focus', { hasText: 'Allow Once' }).waitFor({ timeout: UI_MS });
    await this.page.keyboard.press('Enter');
    await this.buttons.waitFor({ state: 'detached', timeout: UI_MS });
  }

  async skip(): Promise<void> {
    await this.buttons.locator('a.monaco-button', { hasText: 'Skip' }).click();
    await this.buttons.waitFor({ state: 'detached', timeout: UI_MS });
  }
}

/** Runs a command through the command palette, retrying (bounded) until the command is there. */
export async function runCommand(page: Page, title: string): Promise<void> {
  await retry(page, UI_MS * 3, async () => {
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ timeout: UI_MS });
    await input.fill(`>${title}`);
    // Its own row, not "... for this Workspace": the label is the title, maybe with ", recently used".
    const row = page.locator(`.quick-input-list .monaco-list-row:is([aria-label="${title}"], [aria-label^="${title}, "])`).first();
    try {
      await row.waitFor({ timeout: 1000 });
    } catch (error) {
      await page.keyboard.press('Escape');
      throw error;
    }
    await row.click(); // not Enter: that goes wherever the focus is
    await input.waitFor({ state: 'hidden', timeout: UI_MS });
  });
}

/**
 * Calls `attempt` until it resolves, for at most `ms`; rejects with its last error. Each attempt
 * waits (bounded) for what it needs, so this does not spin; a closed page ends it at once.
 */
export async function retry(page: Page, ms: number, attempt: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() > deadline || page.isClosed()) {
        throw error;
      }
    }
  }
}
