import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openingExchange, sessionAge } from '../../opening';

describe('Continue an Agent Session', () => {
  const session = { sessionId: 's-1', cwd: '/work/app', title: 'Fix the login bug', updatedAt: '2026-11-23T12:40:40.842Z', token: 'symposium-continue:abc.def' };

  it("opens the chat with an exchange whose answer carries the session's token", () => {
    const { request, response } = openingExchange('Claude Code', session);
    assert.equal(request, 'Continue the Claude Code session “Fix the login bug”');
    assert.match(response, /continues Claude Code's session “Fix the login bug” \(in \/work\/app, last active /);
    assert.ok(response.endsWith('`symposium-continue:abc.def`'));
    assert.match(openingExchange('Codex', { ...session, title: null, updatedAt: null }).request, /session s-1$/);
  });

  it('says how long ago a session was active', () => {
    const now = Date.parse('2026-11-23T12:40:40Z');
    assert.equal(sessionAge('2026-11-23T12:40:10Z', now), 'just now');
    assert.equal(sessionAge('2026-11-23T12:37:40Z', now), '3 minutes ago');
    assert.equal(sessionAge('2026-11-23T11:40:40Z', now), '1 hour ago');
    assert.equal(sessionAge('2026-11-21T12:40:40Z', now), '2 days ago');
    assert.equal(sessionAge(null, now), '');
    assert.equal(sessionAge('yesterday', now), '');
  });
});
